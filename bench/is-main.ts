import path from 'node:path';

/**
 * Whether a bench module was started on its own (`npx tsx bench/state.ts`). Compared by file name,
 * not by URL: in the bundle `npm run bench` runs, every module shares the bundle's URL.
 */
export function isMain(name: string): boolean {
  const argv1 = process.argv[1];
  return argv1 !== undefined && path.basename(argv1).replace(/\.(ts|js|mjs)$/, '') === name;
}
