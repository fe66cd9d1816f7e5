// `npm run bench`: every benchmark in one process, one JSON document on stdout (also written to
// bench/out/latest.json). scripts/bench.mjs runs it bundled, as the app and CLI ship, so worker
// threads start as they do for users. Figures are compared as ratios within one run: these
// machines are shared.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchIngest } from './ingest';
import { benchState } from './state';
import { benchRedact } from './redact';
import { benchBundle, verifyOnceFromArgv } from './bundle';
import { benchUi } from './ui';
import { benchOtlp } from './otlp';
import { benchOpen } from './open';
import { benchSessions } from './sessions';
import { benchPeer } from './peer';
import { benchInspect } from './inspect';
import { benchTeamLedger } from './team-ledger';
import { benchGateway } from './gateway';
import { benchLiveState } from './live-state';

const benches: { name: string; run: () => unknown }[] = [
  { name: 'ledger', run: () => benchIngest() },
  { name: 'state', run: () => benchState() },
  { name: 'redaction', run: () => benchRedact() },
  { name: 'bundle', run: () => benchBundle() },
  { name: 'ui', run: () => benchUi() },
  // Stepping the state pane of a run that appends (500 runs in the folder), and quiet.
  { name: 'live-state', run: () => benchLiveState() },
  { name: 'otlp', run: () => benchOtlp() },
  { name: 'open', run: () => benchOpen() },
  // The real agents' model gateway: added latency per call, memory over a long session.
  { name: 'gateway', run: () => benchGateway() },
  // PostgreSQL beside SQLite (skipped, saying why, without PostgreSQL).
  { name: 'team-ledger', run: () => benchTeamLedger() },
  // An Inspect AI log with 100,000 events in one sample (PL_BENCH_INSPECT_EVENTS=<n>).
  { name: 'inspect', run: () => benchInspect() },
  // Beside claude-run 0.3.0 (npm, installed into a temporary folder): 5 small sessions and a 200 MB
  // one, first messages and peak RSS (PL_BENCH_PEER_PART=small|big: one of them).
  { name: 'peer', run: () => benchPeer(process.env.PL_BENCH_PEER_PART as 'small' | 'big' | undefined) },
  // PL_BENCH_SESSIONS_PART=many|big: one half of it.
  {
    name: 'sessions',
    run: () => benchSessions(process.env.PL_BENCH_SESSIONS_PART as 'many' | 'big' | undefined),
  },
];

// The bundle bench runs this bundle again to time a verify in a new process: nothing else then.
if (await verifyOnceFromArgv()) process.exit(0);

const only = process.argv.slice(2);
const results: Record<string, unknown> = {
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  },
  at: new Date().toISOString(),
};
for (const b of benches) {
  if (only.length && !only.includes(b.name)) continue;
  process.stderr.write(`bench: ${b.name}…\n`);
  const t0 = performance.now();
  try {
    results[b.name] = await b.run();
  } catch (e) {
    results[b.name] = { error: (e as Error).message };
  }
  process.stderr.write(`bench: ${b.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}
const text = JSON.stringify(results, null, 2);
// bench/out beside this file's folder, whether it runs from bench/ or bundled in dist/.
const out = path.resolve(import.meta.dirname, '..', 'bench', 'out');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'latest.json'), text + '\n');
process.stdout.write(text + '\n');
