/**
 * The CLI's code cache (electron/cli/code-cache.ts) on a small CommonJS "dist" of its own: an entry
 * and a chunk, loaded as bin/proofloop.js loads dist/cli.cjs, each load in a process of its own
 * (the cache is written at exit, and V8's flags are the process's).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';

const CODE_CACHE = path.resolve(__dirname, '../../electron/cli/code-cache.ts');
const LEAN = path.resolve(__dirname, '../../electron/lean.ts');

let dir: string;
let dist: string;
let cache: string;

// The chunk's functions run only when called: a cache made after the run holds them compiled.
const CHUNK = `'use strict';
exports.scale = (x) => x * 7;
exports.words = (s) => s.split(' ').map((w) => w.toUpperCase()).join('-');
`;
const ENTRY = `#!/usr/bin/env node
'use strict';
const chunk = require('./app-chunk.cjs');
exports.run = () => ({ n: chunk.scale(6), w: chunk.words('code cache') });
`;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pl-cc-'));
  dist = path.join(dir, 'dist');
  cache = path.join(dir, 'cache');
  mkdirSync(dist);
  writeFileSync(path.join(dist, 'app.cjs'), ENTRY);
  writeFileSync(path.join(dist, 'app-chunk.cjs'), CHUNK);
  writeFileSync(
    path.join(dir, 'load.mts'),
    `const { loadWithCodeCache } = await import(${JSON.stringify(CODE_CACHE)});
const lean = await import(${JSON.stringify(LEAN)});
// As bin/proofloop.js does for serve: lean before the bundle loads.
if (process.env.CC_MODE === 'lean') lean.goLean();
const m = loadWithCodeCache(${JSON.stringify(path.join(dist, 'app.cjs'))});
const out = m.run();
if (process.env.LEAVE_LEAN) lean.leaveLean();
const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const until = cpu() + Number(process.env.BUSY_MS ?? 0);
while (cpu() < until);
console.log(JSON.stringify(out));
`,
  );
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

function load(env: NodeJS.ProcessEnv = {}): { out: unknown; said: string[] } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, 'load.mts')], {
    encoding: 'utf8',
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, PROOFLOOP_CODE_CACHE: cache, PROOFLOOP_DEBUG: '1', ...env },
  });
  expect(r.status, r.stderr).toBe(0);
  const said = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('code cache: '))
    .map((l) => l.slice('code cache: '.length));
  return { out: JSON.parse(r.stdout), said };
}

const file = (name: string) => path.join(cache, name);

it('a first load writes a cache per file at exit; the next load uses it and leaves it alone', () => {
  const first = load();
  expect(first.out).toEqual({ n: 42, w: 'CODE-CACHE' });
  expect(first.said).toEqual([
    'app.cjs: none (full flags)',
    'app-chunk.cjs: none (full flags)',
    expect.stringMatching(/^app\.cjs: written \(full flags, after \d+ ms of CPU\)$/),
    expect.stringMatching(/^app-chunk\.cjs: written \(full flags/),
  ]);
  const made = statSync(file('app-chunk.cjs.full.bin')).mtimeMs;

  const second = load();
  expect(second.out).toEqual({ n: 42, w: 'CODE-CACHE' });
  expect(second.said).toEqual(['app.cjs: used (full flags)', 'app-chunk.cjs: used (full flags)']);
  expect(statSync(file('app-chunk.cjs.full.bin')).mtimeMs).toBe(made);
});

it('a changed source of the same length is not run from the old cache (V8 checks only the length)', () => {
  load();
  // Same length, other behaviour: V8 alone would accept the old cache and run the old code.
  writeFileSync(path.join(dist, 'app-chunk.cjs'), CHUNK.replace('x * 7', 'x * 8'));
  const after = load();
  expect(after.out).toEqual({ n: 48, w: 'CODE-CACHE' });
  expect(after.said).toContain('app-chunk.cjs: none (full flags)');
  expect(after.said).toContain('app.cjs: used (full flags)');
  expect(load().said).toContain('app-chunk.cjs: used (full flags)');
});

it('lean and full flags keep caches of their own; one made under other flags is rejected and replaced', () => {
  load();
  load({ CC_MODE: 'lean' });
  expect(existsSync(file('app.cjs.lean.bin'))).toBe(true);
  expect(load({ CC_MODE: 'lean' }).said).toContain('app.cjs: used (lean flags)');

  // The full cache where the lean one belongs: V8 sees other flags and says no.
  writeFileSync(file('app.cjs.lean.bin'), readFileSync(file('app.cjs.full.bin')));
  const rejected = load({ CC_MODE: 'lean' });
  expect(rejected.out).toEqual({ n: 42, w: 'CODE-CACHE' });
  expect(rejected.said).toContain('app.cjs: rejected by V8 (lean flags)');
  expect(rejected.said).toContainEqual(expect.stringMatching(/^app\.cjs: written \(lean flags/));
  expect(load({ CC_MODE: 'lean' }).said).toContain('app.cjs: used (lean flags)');
});

it('leaving lean mode writes the lean cache first, and the full one at exit', () => {
  const r = load({ CC_MODE: 'lean', LEAVE_LEAN: '1' });
  const written = r.said.filter((s) => s.startsWith('app.cjs: written'));
  expect(written).toEqual([expect.stringMatching(/\(lean flags/), expect.stringMatching(/\(full flags/)]);
  expect(load({ CC_MODE: 'lean' }).said).toContain('app.cjs: used (lean flags)');
  expect(load().said).toContain('app.cjs: used (full flags)');

  // Both there: leaving lean mode again writes neither (the full one is known by its header alone).
  const again = load({ CC_MODE: 'lean', LEAVE_LEAN: '1' });
  expect(again.said.filter((s) => s.includes('written'))).toEqual([]);
  // A full cache cut to its header (magic, source digest, CPU ms) holds no code: it is written again.
  const header = 'PLCC1\n'.length + 32 + 4;
  writeFileSync(file('app.cjs.full.bin'), readFileSync(file('app.cjs.full.bin')).subarray(0, header));
  const cut = load({ CC_MODE: 'lean', LEAVE_LEAN: '1' });
  expect(cut.said).toContainEqual(expect.stringMatching(/^app\.cjs: written \(full flags/));
  expect(load().said).toContain('app.cjs: used (full flags)');
});

it('a process that worked much longer than the one that made the cache writes it again', () => {
  load();
  const cpu = (f: string) => readFileSync(file(f)).readUInt32LE(6 + 32);
  const before = cpu('app.cjs.full.bin');
  const busy = load({ BUSY_MS: String(2.5 * before) });
  expect(busy.said).toContainEqual(expect.stringMatching(/^app\.cjs: written/));
  expect(cpu('app.cjs.full.bin')).toBeGreaterThan(2 * before);
});

it('PROOFLOOP_CODE_CACHE=0 writes nothing; an unwritable folder only says so', () => {
  const none = load({ PROOFLOOP_CODE_CACHE: '0' });
  expect(none.out).toEqual({ n: 42, w: 'CODE-CACHE' });
  expect(none.said).toEqual([]);
  expect(existsSync(cache)).toBe(false);

  // A folder under a file: no folder can be made there, not even by root.
  writeFileSync(path.join(dir, 'a-file'), '');
  const ro = load({ PROOFLOOP_CODE_CACHE: path.join(dir, 'a-file', 'cache') });
  expect(ro.out).toEqual({ n: 42, w: 'CODE-CACHE' });
  expect(ro.said).toContainEqual(expect.stringMatching(/^app\.cjs: not written: /));
});
