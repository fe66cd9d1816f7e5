// Set-up shared by `npm start` and `npm test`: what a fresh machine needs before either can run.
import { existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

export const root = new URL('..', import.meta.url).pathname;

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  return r.status ?? 1;
}

/** npm ci when dependencies are missing (the Electron binary download is left to ensureElectron). */
export function ensureDeps() {
  if (existsSync(new URL('../node_modules/.package-lock.json', import.meta.url))) return;
  console.log('setup: installing dependencies (npm ci)…');
  const code = run('npm', ['ci'], {
    env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
  if (code !== 0) process.exit(code);
}

export function build() {
  const code = run(process.execPath, ['scripts/build.mjs']);
  if (code !== 0) process.exit(code);
}

/** Debian's Chromium for the browser tests; installed with apt-get when we are root and it is missing. */
export function ensureChromium() {
  if (existsSync('/usr/bin/chromium')) return true;
  if (process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    console.log('setup: installing Debian chromium for the browser tests…');
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', 'chromium'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  return existsSync('/usr/bin/chromium');
}

/**
 * Debian's PostgreSQL for the team-ledger tests (they start throwaway clusters of their own with
 * initdb and pg_ctl); installed with apt-get when we are root and it is missing. Returns the bin
 * folder, or null (those tests then skip, saying why).
 */
export function ensurePostgres() {
  const find = () => {
    const base = '/usr/lib/postgresql';
    if (!existsSync(base)) return null;
    const majors = readdirSync(base)
      .filter((d) => /^\d+$/.test(d) && existsSync(`${base}/${d}/bin/initdb`))
      .sort((a, b) => Number(b) - Number(a));
    return majors.length ? `${base}/${majors[0]}/bin` : null;
  };
  if (find()) return find();
  if (process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    console.log('setup: installing Debian postgresql for the team-ledger tests…');
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', 'postgresql'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  return find();
}
