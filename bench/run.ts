// `npm run bench`: every benchmark in one process, one JSON document on stdout (also written to
// bench/out/latest.json). Figures are compared as ratios within one run: these machines are shared.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

type Bench = { name: string; file: string; fn: string };

const benches: Bench[] = [
  { name: 'ledger', file: './ingest.ts', fn: 'benchIngest' },
  { name: 'state', file: './state.ts', fn: 'benchState' },
  { name: 'redaction', file: './redact.ts', fn: 'benchRedact' },
  { name: 'bundle', file: './bundle.ts', fn: 'benchBundle' },
  { name: 'ui', file: './ui.ts', fn: 'benchUi' },
];

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
  const file = path.join(import.meta.dirname, b.file);
  if (!existsSync(file)) {
    results[b.name] = { skipped: `${b.file} not present` };
    continue;
  }
  process.stderr.write(`bench: ${b.name}…\n`);
  const t0 = performance.now();
  try {
    const mod = (await import(file)) as Record<string, () => Promise<unknown>>;
    results[b.name] = await mod[b.fn]!();
  } catch (e) {
    results[b.name] = { error: (e as Error).message };
  }
  process.stderr.write(`bench: ${b.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}
const text = JSON.stringify(results, null, 2);
mkdirSync(path.join(import.meta.dirname, 'out'), { recursive: true });
writeFileSync(path.join(import.meta.dirname, 'out', 'latest.json'), text + '\n');
process.stdout.write(text + '\n');
