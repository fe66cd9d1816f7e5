/**
 * A writer process of the PostgreSQL concurrency tests. Args: url runId batches batchSize leaseMs
 * [wait] [holdMaxMs] [retryMs].
 * - Takes the run's writer (retrying for retryMs when given, else once): prints `READY <fence>`, or
 *   `REFUSED <message>` and exits 3.
 * - `wait` = "wait": reads a line from stdin before appending (so that all contenders are started).
 * - Appends `batches` batches of `batchSize` events; after each acknowledged one prints
 *   `ACK <last seq> <last hash>`. holdMaxMs: each append's transaction is held open a random
 *   0..holdMaxMs ms. An append refused prints `REFUSED <message>` and exits 3.
 */
import { PostgresEngine } from '../../../electron/ledger/postgres/engine';
import type { EngineWriter } from '../../../electron/ledger/engine';
import { ProofloopError } from '../../../shared/result';

const [url, runId, batchesArg, sizeArg, leaseArg, wait, holdArg, retryArg] = process.argv.slice(2);
const batches = Number(batchesArg);
const size = Number(sizeArg);
const holdMax = Number(holdArg ?? 0);
const retryMs = Number(retryArg ?? 0);

const say = (line: string) => process.stdout.write(line + '\n');

async function main(): Promise<void> {
  const engine = await PostgresEngine.connect(url!, { max: 2 });
  let writer: EngineWriter | null = null;
  const until = Date.now() + retryMs;
  for (;;) {
    try {
      writer = await engine.writer(runId!, {
        create: {},
        label: `child ${process.pid}`,
        leaseMs: Number(leaseArg),
        holdOpenMs: holdMax > 0 ? () => Math.floor(Math.random() * holdMax) : undefined,
      });
      break;
    } catch (e) {
      if (e instanceof ProofloopError && e.code === 'conflict' && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      say(`REFUSED ${(e as Error).message}`);
      process.exit(3);
    }
  }
  say(`READY ${writer.fence}`);
  if (wait === 'wait') {
    await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  }
  let n = 0;
  for (let b = 0; b < batches; b++) {
    const items = Array.from({ length: size }, () => {
      n += 1;
      return {
        kind: 'model_proposed',
        payload: { call_id: `${process.pid}-${n}`, tool: 'read_file', args: { path: `f${n}.py` }, tokens: n },
      };
    });
    try {
      const out = await writer.appendBatch(items);
      const last = out[out.length - 1]!;
      say(`ACK ${last.seq} ${last.hash}`);
    } catch (e) {
      say(`REFUSED ${(e as Error).message}`);
      process.exit(3);
    }
  }
  await writer.close();
  await engine.close();
  say('DONE');
}

main().catch((e: unknown) => {
  say(`ERROR ${(e as Error).stack ?? String(e)}`);
  process.exit(2);
});
