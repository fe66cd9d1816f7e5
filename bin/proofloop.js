#!/usr/bin/env node
// The `proofloop` command: the built CLI (npm ci builds it; `npm run build` rebuilds it).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
if (!existsSync(built)) {
  process.stderr.write('proofloop: not built yet: run `npm run build` in the ProofLoop folder\n');
  process.exit(2);
}
// The bundles are minified (scripts/build.mjs): a stack printed for a bug report is mapped back to
// the sources. Only then: reading the maps costs memory every command would pay.
if (process.env.PROOFLOOP_DEBUG === '1') process.setSourceMapsEnabled(true);
// The CLI loads with the compiled code of earlier starts (dist/code-cache.js says how).
const { goLean, loadWithCodeCache } = await import(new URL('../dist/code-cache.js', import.meta.url).href);
// Before the CLI's bundle loads: `serve` starts lean, its young generation at its first size and no
// optimizing compiler (electron/lean.ts says why). A word `serve` that is no command (a folder so
// named) only starts it lean: the CLI leaves lean mode for every command but serve.
if (process.argv.slice(2).includes('serve')) goLean();
const { main } = loadWithCodeCache(built);
process.exitCode = await main(process.argv.slice(2));
