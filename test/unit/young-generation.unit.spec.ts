/**
 * serve's memory depends on V8 honouring `--semi-space-growth-factor` set while running
 * (electron/young-generation.ts): a Node whose V8 froze its flags after start would silently hold
 * ~6 MB more. In a process of its own (the flag is the process's): objects that survive churn
 * through the young generation, kept small, then let grow.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const MODULE = path.resolve(__dirname, '../../electron/young-generation.ts');

const SCRIPT = `
import v8 from 'node:v8';
import { keepYoungGenerationSmall, letYoungGenerationGrow } from ${JSON.stringify(MODULE)};
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
keepYoungGenerationSmall();
const small = churn(1000000);
letYoungGenerationGrow();
const grown = churn(1000000);
console.log(JSON.stringify({ first, small, grown }));
`;

it('the young generation stays at its first size while kept small, and grows once let', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pl-young-'));
  try {
    const file = path.join(dir, 'churn.mts');
    writeFileSync(file, SCRIPT);
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], {
      encoding: 'utf8',
      cwd: path.resolve(__dirname, '../..'),
    });
    expect(r.status, r.stderr).toBe(0);
    const { first, small, grown } = JSON.parse(r.stdout) as { first: number; small: number; grown: number };
    // Both semi-spaces at their first size: 2 × 1 MiB.
    expect(small).toBeLessThanOrEqual(2 * first);
    expect(grown).toBeGreaterThanOrEqual(8 * first);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
