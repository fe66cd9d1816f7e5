/**
 * serve's memory depends on V8 honouring flags set while running (electron/lean.ts): a Node whose
 * V8 froze them after start would silently hold ~10 MB more, and one that never let them go would
 * run every large job slowly. Each case in a process of its own (the flags are the process's).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const MODULE = path.resolve(__dirname, '../../electron/lean.ts');

function runScript<T>(body: string): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'pl-lean-'));
  try {
    const file = path.join(dir, 'script.mts');
    writeFileSync(
      file,
      `import v8 from 'node:v8';\nimport * as lean from ${JSON.stringify(MODULE)};\n${body}`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], {
      encoding: 'utf8',
      cwd: path.resolve(__dirname, '../..'),
    });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it('the young generation stays at its first size while lean, and grows once lean mode is left', () => {
  const { first, small, grown } = runScript<{ first: number; small: number; grown: number }>(`
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const kept = [];
// Many survivors, as loading modules makes: each scavenge copies a lot, which is what grows it.
const churn = (n) => {
  let max = 0;
  for (let i = 0; i < n; i++) {
    kept.push({ i, s: 'x' + i, a: [i, i + 1] });
    if (kept.length > 200000) kept.splice(0, 100000);
    max = Math.max(max, newSpace());
  }
  return max;
};
const first = newSpace();
lean.goLean();
const small = churn(1000000);
lean.leaveLean();
const grown = churn(1000000);
console.log(JSON.stringify({ first, small, grown }));
`);
  // Both semi-spaces at their first size: 2 × 1 MiB.
  expect(small).toBeLessThanOrEqual(2 * first);
  expect(grown).toBeGreaterThanOrEqual(8 * first);
});

// A hot function, its optimization status read with V8's own intrinsic (bit 4: optimized).
const HOT = `
v8.setFlagsFromString('--allow-natives-syntax');
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const makeHot = () => {
  const f = (n) => { let h = 0; for (let i = 0; i < n; i++) h = (h * 31 + i) | 0; return h; };
  return f;
};
const optimizedAfterWork = async (f) => {
  for (let r = 0; r < 400; r++) {
    f(20000);
    if (r % 50 === 49) await new Promise((res) => setTimeout(res, 5));
  }
  return (status(f) & 16) !== 0;
};
`;

it('no function is optimized while lean, and hot ones are once lean mode is left', () => {
  const r = runScript<{ leanOpt: boolean; afterOpt: boolean; lean: boolean }>(`${HOT}
lean.goLean();
const leanOpt = await optimizedAfterWork(makeHot());
lean.leaveLean();
const afterOpt = await optimizedAfterWork(makeHot());
console.log(JSON.stringify({ leanOpt, afterOpt, lean: lean.isLean() }));
`);
  expect(r).toEqual({ leanOpt: false, afterOpt: true, lean: false });
});

it('a lean process leaves lean mode once it has used its CPU budget, not before', () => {
  const r = runScript<{ before: boolean; after: boolean; optimized: boolean }>(`${HOT}
lean.goLean();
const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const budget = used() + 300;
lean.noteWork(budget);
const before = lean.isLean();
const f = makeHot();
while (used() < budget) f(20000);
lean.noteWork(budget);
const after = lean.isLean();
const optimized = await optimizedAfterWork(f);
console.log(JSON.stringify({ before, after, optimized }));
`);
  expect(r).toEqual({ before: true, after: false, optimized: true });
});
