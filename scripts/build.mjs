// Builds everything that runs outside tsx: the Electron main and preload, the CLI, the child
// processes of the runner, and the renderer. esbuild for Node code (fast, one file per entry),
// Vite for the renderer.
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  // Dependencies are bundled in: resolving and loading them as separate ESM/CJS modules was half of
  // every CLI command's start (`proofloop --version` 1.0–1.2 s against 0.5–0.75 s bundled, same
  // run). Native and Electron's own modules stay outside.
  external: ['better-sqlite3', 'electron', 'zstd-napi'],
  // Whitespace and syntax only: names stay (stack traces, `constructor.name`), comments go. A
  // comment with one non-ASCII character made V8 hold the whole bundle as a two-byte string, and
  // the CLI's code was read, decoded and kept at twice its size: minified, `proofloop --version`
  // and `serve` of a small folder took ~1.7 MB less (scripts/build.mjs history). PROOFLOOP_DEBUG=1
  // maps stacks back to the sources (bin/proofloop.js).
  minifyWhitespace: true,
  minifySyntax: true,
  charset: 'ascii',
  absWorkingDir: root,
  logLevel: 'warning',
};

const entries = [
  { in: 'electron/main.ts', out: 'dist/electron/main.js' },
  { in: 'electron/runner/model-process.ts', out: 'dist/children/model.js' },
  { in: 'electron/runner/judge-process.ts', out: 'dist/children/judge.js' },
  // The JSONL import's parse workers sit beside each bundle that imports (CLI and app).
  // Large appends are finished and chained in a helper thread beside each bundle that appends.
  { in: 'electron/ledger/append-worker.ts', out: 'dist/append-worker.js' },
  { in: 'electron/ledger/append-worker.ts', out: 'dist/electron/append-worker.js' },
  { in: 'electron/ingest/worker.ts', out: 'dist/ingest-worker.js' },
  { in: 'electron/ingest/worker.ts', out: 'dist/electron/ingest-worker.js' },
  // serve and the app import a folder in a thread of its own, beside the one that answers the page.
  { in: 'electron/ingest/folder-worker.ts', out: 'dist/import-worker.js' },
  { in: 'electron/ingest/folder-worker.ts', out: 'dist/electron/import-worker.js' },
  // The OTLP receiver (serve and the app) decodes request bodies in a thread of its own.
  { in: 'electron/otlp/decode-worker.ts', out: 'dist/otlp-decode-worker.js' },
  { in: 'electron/otlp/decode-worker.ts', out: 'dist/electron/otlp-decode-worker.js' },
  // The run diff prepares one side in a worker thread.
  { in: 'electron/state/diff-worker.ts', out: 'dist/diff-worker.js' },
  { in: 'electron/state/diff-worker.ts', out: 'dist/electron/diff-worker.js' },
  // bin/proofloop.js loads the CLI through it (electron/cli/code-cache.ts).
  { in: 'electron/cli/code-cache.ts', out: 'dist/code-cache.js' },
  // The bundle exporter reads, sorts and scans in worker threads.
  { in: 'electron/bundle/export-worker.ts', out: 'dist/bundle-export-worker.js' },
  { in: 'electron/bundle/export-worker.ts', out: 'dist/electron/bundle-export-worker.js' },
  // verify-bundle analyses blocks of event lines in worker threads.
  { in: 'electron/bundle/verify-worker.ts', out: 'dist/bundle-verify-worker.js' },
  { in: 'electron/bundle/verify-worker.ts', out: 'dist/electron/bundle-verify-worker.js' },
  // A real agent's model gateway answers from a thread of its own; the run's thread records.
  { in: 'electron/runner/gateway/worker.ts', out: 'dist/gateway-worker.js' },
  { in: 'electron/runner/gateway/worker.ts', out: 'dist/electron/gateway-worker.js' },
].filter((e) => existsSync(new URL(`../${e.in}`, import.meta.url)));

// The CLI's chunks are named by their content's hash: those of earlier builds are removed first.
const dist = new URL('../dist/', import.meta.url);
if (existsSync(dist))
  for (const f of readdirSync(dist)) if (/^cli([-.].*)?\.c?js(\.map)?$/.test(f)) rmSync(new URL(f, dist));
const cliEsm = path.join(root, 'dist/.cli-esm');
rmSync(cliEsm, { recursive: true, force: true });

// ESM bundles of CJS-era code need require/__dirname.
const banner = {
  js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
};

await Promise.all([
  buildCli(),
  ...entries.map((e) =>
    build({
      ...node,
      entryPoints: [e.in],
      outfile: e.out,
      banner,
    }),
  ),
  // A sandboxed preload must be one CommonJS file with nothing but `electron` outside it.
  build({
    ...node,
    external: ['electron'],
    format: 'cjs',
    entryPoints: ['electron/preload.ts'],
    outfile: 'dist/electron/preload.cjs',
  }),
]);

/**
 * The CLI in chunks: what a command imports dynamically (PostgreSQL's client, OTLP's protobuf code)
 * is read and compiled only when that command needs it. As CommonJS: Node 20 keeps a code cache only
 * for CommonJS (electron/cli/code-cache.ts). esbuild bundles (TypeScript, CommonJS dependencies) and
 * splits, but only into ES modules; Rollup turns those chunks into CommonJS ones and maps them back
 * through esbuild's source maps. Chunks sit beside cli.cjs, so code that finds its workers and
 * children by import.meta.url (Rollup: the chunk's own file) finds them from any chunk.
 */
async function buildCli() {
  // No `require` banner: in CommonJS, esbuild's require shim finds the module's own.
  await build({ ...node, entryPoints: { cli: 'electron/cli/main.ts' }, outdir: cliEsm, splitting: true });
  const bundle = await rollup({
    input: path.join(cliEsm, 'cli.js'),
    external: (id) => isBuiltin(id) || node.external.includes(id),
    plugins: [
      {
        name: 'esbuild-output',
        load: (id) => ({ code: readFileSync(id, 'utf8'), map: readFileSync(`${id}.map`, 'utf8') }),
        resolveImportMeta: (prop) => ({ dirname: '__dirname', filename: '__filename' })[prop] ?? null,
      },
    ],
    // esbuild's chunks import each other both ways; Rollup orders them as esbuild did.
    onwarn: (w, warn) => (w.code === 'CIRCULAR_DEPENDENCY' ? undefined : warn(w)),
  });
  await bundle.write({
    dir: path.join(root, 'dist'),
    format: 'cjs',
    entryFileNames: 'cli.cjs',
    chunkFileNames: 'cli-[name]-[hash].cjs',
    generatedCode: 'es2015',
    sourcemap: true,
  });
  await bundle.close();
  rmSync(cliEsm, { recursive: true, force: true });
  // The code caches of chunks this build no longer has (electron/cli/code-cache.ts). The others
  // stay: a chunk built again the same is the same file, and a cache carries its source's SHA-256,
  // so a changed `cli.cjs` is compiled anew at its next start (`npm start` builds every time).
  const caches = path.join(root, 'dist/code-cache');
  if (existsSync(caches))
    for (const f of readdirSync(caches)) {
      const chunk = f.replace(/\.(lean|full)\.bin$/, '');
      if (chunk === f || !existsSync(path.join(root, 'dist', chunk)))
        rmSync(path.join(caches, f), { force: true });
    }
}

if (!process.argv.includes('--node-only')) {
  const r = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
console.log(
  `built ${entries.length + 2} node bundles${process.argv.includes('--node-only') ? '' : ' and the renderer'} into dist/`,
);
