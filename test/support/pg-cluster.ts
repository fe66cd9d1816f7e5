import { execFileSync, spawnSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A throwaway PostgreSQL cluster for tests: initdb and pg_ctl in a temporary folder, on loopback
 * at a random port, torn down after. As root (this machine, CI) the server runs as the `postgres`
 * user, which owns the folder; otherwise as ourselves. Debian's packages put the binaries in
 * /usr/lib/postgresql/<major>/bin; PG_BINDIR overrides.
 */
export function pgBinDir(): string | null {
  const env = process.env.PG_BINDIR;
  if (env && existsSync(path.join(env, 'initdb'))) return env;
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const majors = readdirSync(base)
      .filter((d) => /^\d+$/.test(d) && existsSync(path.join(base, d, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors.length > 0) return path.join(base, majors[0]!, 'bin');
  }
  return null;
}

/** Why PostgreSQL tests cannot run here, or null when they can (printed by the suites that skip). */
export function pgUnavailable(): string | null {
  const bin = pgBinDir();
  if (!bin) return 'PostgreSQL is not installed (apt-get install postgresql; or set PG_BINDIR)';
  if (process.getuid?.() === 0) {
    const r = spawnSync('id', ['-u', 'postgres']);
    if (r.status !== 0) return 'running as root and there is no `postgres` user to run the server as';
  }
  return null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

const asRoot = () => process.getuid?.() === 0;

function runAsOwner(cmd: string, args: string[]): string {
  const [file, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface PgCluster {
  dir: string;
  port: number;
  /** postgres://postgres@127.0.0.1:port/<db> */
  url(db?: string): string;
  /** pg_ctl stop (fast), then the folder removed. */
  stop(): void;
  /** The postmaster's pid (for SIGKILL tests). */
  pid(): number;
  start(): void;
  bin: string;
}

export interface ClusterOptions {
  /** Extra lines for postgresql.conf. */
  conf?: string[];
  /** Extra lines for pg_hba.conf (replication). */
  hba?: string[];
  /** Make the data folder from pg_basebackup of this primary instead of initdb (a streaming replica). */
  replicaOf?: { port: number; slot?: string };
}

/** Starts a cluster; `await using`-free: call stop() in afterAll. */
export async function startCluster(opts: ClusterOptions = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed');
  const dir = mkdtempSync(path.join(tmpdir(), 'proofloop-pg-'));
  if (asRoot()) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), -1);
  const data = path.join(dir, 'data');
  const port = await freePort();
  if (opts.replicaOf) {
    runAsOwner(path.join(bin, 'pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(opts.replicaOf.port),
      '-U',
      'postgres',
      '-D',
      data,
      '-R',
      '-X',
      'stream',
      ...(opts.replicaOf.slot ? ['-S', opts.replicaOf.slot] : []),
    ]);
  } else {
    runAsOwner(path.join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
  }
  const conf = [
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${dir}'`,
    'max_connections = 100',
    'shared_buffers = 64MB',
    ...(opts.conf ?? []),
  ];
  // postgresql.auto.conf is read last: a replica's copied primary_conninfo stays, the port is ours.
  const file = path.join(data, 'postgresql.auto.conf');
  appendFileSync(file, '\n' + conf.join('\n') + '\n');
  if (opts.hba) appendFileSync(path.join(data, 'pg_hba.conf'), '\n' + opts.hba.join('\n') + '\n');
  const log = path.join(dir, 'server.log');
  writeFileSync(log, '');
  if (asRoot()) chownSync(log, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), -1);
  const start = () => {
    runAsOwner(path.join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', 'start']);
  };
  start();
  return {
    dir,
    port,
    bin,
    url: (db = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${db}`,
    pid: () => {
      const text = execFileSync('head', ['-1', path.join(data, 'postmaster.pid')], { encoding: 'utf8' });
      return Number(text.trim());
    },
    start,
    stop: () => {
      try {
        runAsOwner(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped (a test killed it)
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** pg_ctl promote of a standby. */
export function promote(c: PgCluster): void {
  runAsOwner(path.join(c.bin, 'pg_ctl'), ['-D', path.join(c.dir, 'data'), '-w', 'promote']);
}
