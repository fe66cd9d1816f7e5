// `npm run bench`: build as for shipping, bundle bench/run.ts beside the other bundles in dist/
// (so worker threads start from their built files, as they do in the app and CLI), and run it.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { root, run } from './setup.mjs';

const code = run(process.execPath, ['scripts/build.mjs']);
if (code !== 0) process.exit(code);
await build({
  entryPoints: ['bench/run.ts'],
  outfile: 'dist/bench.js',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  absWorkingDir: root,
  logLevel: 'warning',
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
});
const r = spawnSync(process.execPath, ['dist/bench.js', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
