// `npm start`: set up, build, and open the desktop app. Where the Electron binary cannot be had,
// say so in one line and serve web mode on the same default folder instead.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build, ensureDeps, root } from './setup.mjs';

ensureDeps();
build();

const require = createRequire(import.meta.url);

function electronBinary() {
  try {
    const bin = require('electron'); // the path of the binary, or a throw when it was never downloaded
    return typeof bin === 'string' && existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

let bin = electronBinary();
if (!bin && !process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  // npm ci never runs Electron's download script (package.json allowScripts); try it once here.
  spawnSync(process.execPath, [path.join(root, 'node_modules/electron/install.js')], {
    stdio: 'ignore',
    timeout: 120_000,
  });
  bin = electronBinary();
}

/**
 * better-sqlite3 as installed is built for this Node; Electron's Node has another ABI. Build a copy
 * for Electron once (needs Electron's headers from the network, as its binary did) and leave the
 * installed one alone, so the CLI and tests keep working. The app picks the copy up at run time.
 */
function ensureElectronSqlite(electronBin) {
  const abi = spawnSync(electronBin, ['-e', 'process.stdout.write(process.versions.modules)'], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    encoding: 'utf8',
  }).stdout;
  const version = require('electron/package.json').version;
  const target = path.join(root, 'dist', 'native', `better_sqlite3-abi${abi}.node`);
  if (!abi || existsSync(target)) return;
  const work = mkdtempSync(path.join(os.tmpdir(), 'proofloop-sqlite-'));
  cpSync(path.join(root, 'node_modules', 'better-sqlite3'), work, { recursive: true });
  rmSync(path.join(work, 'build'), { recursive: true, force: true });
  const gyp = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  const r = spawnSync(
    process.execPath,
    [gyp, 'rebuild', '--release', `--target=${version}`, '--dist-url=https://electronjs.org/headers'],
    {
      cwd: work,
      stdio: 'inherit',
    },
  );
  if (r.status === 0) {
    mkdirSync(path.dirname(target), { recursive: true });
    cpSync(path.join(work, 'build', 'Release', 'better_sqlite3.node'), target);
  } else {
    console.log('could not build better-sqlite3 for Electron; the app may fail to open ledgers');
  }
  rmSync(work, { recursive: true, force: true });
}

const args = process.argv.slice(2);
if (bin) {
  ensureElectronSqlite(bin);
  const child = spawn(bin, [path.join(root, 'dist/electron/main.js'), ...args], { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 0));
} else {
  const home =
    process.platform === 'darwin'
      ? path.join(os.homedir(), 'Library', 'Application Support')
      : process.platform === 'win32'
        ? (process.env.APPDATA ?? os.homedir())
        : (process.env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'));
  const folder = args[0] ?? path.join(home, 'ProofLoop', 'runs');
  console.log(
    'Electron binary not available on this machine (its download is blocked); serving web mode instead:',
  );
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin/proofloop.js'), 'serve', folder, '--first-run', '--port', process.env.PORT ?? '0'],
    {
      stdio: 'inherit',
    },
  );
  child.on('exit', (code) => process.exit(code ?? 0));
}
