// A separate process that takes the writer of one run and appends N events, one durable
// transaction each. Prints `locked` once it holds the writer, `done <head>` at the end, and on a
// refused writer prints `conflict <message>` and exits 3. With PROOFLOOP_HOLD=<file> it holds the
// writer, appending nothing, until that file exists.
import { existsSync } from 'node:fs';
import { Ledger } from '../../../electron/ledger';
import { ProofloopError } from '../../../shared/result';

const [folder, runId, countArg, batchArg] = process.argv.slice(2);
if (!folder || !runId || !countArg) {
  process.stderr.write('usage: append-worker <folder> <run> <count> [batch]\n');
  process.exit(2);
}
const count = Number(countArg);
const batch = Number(batchArg ?? 1);
const ledger = Ledger.open(folder);
let writer;
try {
  writer = ledger.writer(runId, { label: `worker ${process.pid}` });
} catch (e) {
  if (e instanceof ProofloopError && e.code === 'conflict') {
    process.stdout.write(`conflict ${e.message}\n`);
    process.exit(3);
  }
  throw e;
}
process.stdout.write('locked\n');
const hold = process.env.PROOFLOOP_HOLD;
while (hold && !existsSync(hold)) await new Promise((r) => setTimeout(r, 20));
for (let i = 0; i < count; i += batch) {
  const items = Array.from({ length: Math.min(batch, count - i) }, (_, j) => ({
    kind: 'context_updated',
    payload: { op: 'note', worker: process.pid, i: i + j },
  }));
  writer.appendBatch(items);
}
writer.close();
process.stdout.write(`done ${ledger.run(runId)?.head_seq}\n`);
ledger.close();
