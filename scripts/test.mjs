// `npm test`: every gate, in the order that fails fastest. Sets up a fresh machine first
// (dependencies, build, Debian's Chromium), then: format, lint, typecheck, unit, integration, e2e.
// Ends with one summary line of the tests run: "tests: N passed, N failed, N skipped".
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { build, ensureChromium, ensureDeps, ensurePostgres, root, run } from './setup.mjs';

ensureDeps();
build();
const haveChromium = ensureChromium();
if (!ensurePostgres()) {
  console.log(
    'team-ledger tests: PostgreSQL is missing and could not be installed (apt-get install -y postgresql): they skip',
  );
}

const out = path.join(root, 'test-results');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const bin = (p) => path.join(root, 'node_modules', '.bin', p);
const gates = [
  ['format', bin('prettier'), ['--check', '--log-level', 'warn', '.']],
  ['lint', bin('eslint'), ['--max-warnings', '0', '.']],
  ['typecheck (node)', bin('tsc'), ['-p', 'tsconfig.node.json']],
  ['typecheck (web)', bin('tsc'), ['-p', 'tsconfig.web.json']],
  [
    'unit',
    bin('vitest'),
    [
      'run',
      '--project',
      'unit',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${out}/unit.json`,
    ],
  ],
  [
    'integration',
    bin('vitest'),
    [
      'run',
      '--project',
      'integration',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${out}/integration.json`,
    ],
  ],
];
if (haveChromium) {
  gates.push(['e2e', bin('playwright'), ['test', '--reporter=list,json']]);
} else {
  console.log(
    'e2e: SKIPPED: /usr/bin/chromium is missing and could not be installed (apt-get install -y chromium)',
  );
}

const failed = [];
for (const [name, cmd, args] of gates) {
  console.log(`\n── ${name} ──`);
  const env =
    name === 'e2e' ? { ...process.env, PLAYWRIGHT_JSON_OUTPUT_NAME: `${out}/e2e.json` } : process.env;
  const code = run(cmd, args, { env });
  if (code !== 0) failed.push(name);
}

let passed = 0;
let failedTests = 0;
let skipped = 0;
// A CI log is often kept only by its tail, so the failures are named again here, each with the
// first line of its error: a failure early in a 20-minute run must not need the whole log.
const failures = [];
const firstLine = (m) =>
  stripVTControlCharacters(String(m ?? ''))
    .split('\n')
    .find((l) => l.trim()) ?? '';
for (const f of ['unit', 'integration']) {
  const file = path.join(out, `${f}.json`);
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests ?? 0;
  failedTests += r.numFailedTests ?? 0;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  for (const t of r.testResults ?? []) {
    const rel = path.relative(root, t.name);
    for (const a of t.assertionResults ?? []) {
      if (a.status === 'failed') {
        failures.push(`${f}: ${rel} › ${a.fullName}\n    ${firstLine(a.failureMessages?.[0])}`);
      }
    }
    // A file that failed to load has no assertion results, only its message.
    if (t.status === 'failed' && !(t.assertionResults ?? []).some((a) => a.status === 'failed')) {
      failures.push(`${f}: ${rel}\n    ${firstLine(t.message)}`);
    }
  }
}
const e2e = path.join(out, 'e2e.json');
if (existsSync(e2e)) {
  const report = JSON.parse(readFileSync(e2e, 'utf8'));
  const s = report.stats ?? {};
  passed += (s.expected ?? 0) + (s.flaky ?? 0);
  failedTests += s.unexpected ?? 0;
  skipped += s.skipped ?? 0;
  const walk = (suite, where) => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        if (t.status !== 'unexpected') continue;
        const err = t.results?.at(-1)?.error?.message;
        failures.push(`e2e: ${where} › ${spec.title}\n    ${firstLine(err)}`);
      }
    }
    for (const child of suite.suites ?? []) walk(child, child.file ?? where);
  };
  for (const suite of report.suites ?? []) walk(suite, suite.file);
}
if (failures.length) console.log(`\nfailed tests:\n${failures.map((f) => `  ${f}`).join('\n')}`);
console.log(failed.length ? `\nfailed gates: ${failed.join(', ')}` : '\nall gates passed');
console.log(`tests: ${passed} passed, ${failedTests} failed, ${skipped} skipped`);
process.exit(failed.length ? 1 : 0);
