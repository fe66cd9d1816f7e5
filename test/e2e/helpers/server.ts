import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '../../..');

export interface Served {
  url: string;
  /** `http://127.0.0.1:<port>`, without the token. */
  base: string;
  port: number;
  token: string;
  folder: string;
  /** The OTLP receiver's endpoint (`serve` runs one on a free port here, never on 4318). */
  otlp: string | null;
  /** Calls the API like the renderer does; throws on an error result. */
  call<T = unknown>(method: string, args?: unknown): Promise<T>;
  /** Calls the API and returns the raw Result. */
  callRaw(
    method: string,
    args?: unknown,
  ): Promise<{ ok: boolean; value?: unknown; error?: { code: string; message: string } }>;
  /** Whether the server's contract has the method (methods land one by one). */
  has(method: string): Promise<boolean>;
  stop(): Promise<void>;
}

/** Runs the CLI like a user would (`node --import tsx electron/cli/main.ts …`). */
export function cli(
  args: string[],
  opts: { cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'electron/cli/main.ts'), ...args],
      {
        cwd: opts.cwd ?? repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** `proofloop --folder <folder> run fix-discount --variant <variant> --seed 1`: the new run's id. */
export async function runTask(folder: string, variant: string): Promise<string> {
  const r = await cli([
    '--folder',
    folder,
    '--json',
    'run',
    'fix-discount',
    '--variant',
    variant,
    '--seed',
    '1',
  ]);
  const id = (JSON.parse(r.stdout) as { run_id?: string }).run_id;
  if (!id)
    throw new Error(
      `proofloop run fix-discount --variant ${variant}: no run id (exit ${r.code}): ${r.stderr}`,
    );
  return id;
}

/** `proofloop --folder <folder> append <run> --stdin`, one line per event; rejects unless it exits 0. */
export function appendWithCli(
  folder: string,
  runId: string,
  events: { kind: string; payload: Record<string, unknown> }[],
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'electron/cli/main.ts'),
        '--folder',
        folder,
        'append',
        runId,
        '--stdin',
      ],
      { cwd: repoRoot, stdio: ['pipe', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`append ${runId} exited with ${code}: ${err}`)),
    );
    child.stdin!.end(events.map((e) => JSON.stringify(e) + '\n').join(''));
  });
}

/** Spawns `proofloop serve <folder> --json`, reads its URL from stdout. */
export async function serve(
  folder: string,
  opts: { args?: string[]; env?: Record<string, string> } = {},
): Promise<Served> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(repoRoot, 'electron/cli/main.ts'),
      'serve',
      folder,
      '--json',
      '--otlp-port',
      '0',
      ...(opts.args ?? []),
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const info = await new Promise<{ url: string; port: number; otlp?: { endpoint?: string } | null }>(
    (resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`serve did not print its URL in 30 s\n${out}\n${err}`)),
        30_000,
      );
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        try {
          const parsed = JSON.parse(out) as {
            url: string;
            port: number;
            otlp?: { endpoint?: string } | null;
          };
          clearTimeout(timer);
          resolve(parsed);
        } catch {
          // not a whole JSON document yet
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited with ${code}\n${out}\n${err}`));
      });
    },
  );
  const token = new URLSearchParams(new URL(info.url).hash.slice(1)).get('token') ?? '';
  const base = `http://127.0.0.1:${info.port}`;
  const callRaw: Served['callRaw'] = async (method, args = {}) => {
    const res = await fetch(`${base}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-proofloop-token': token },
      body: JSON.stringify(args),
    });
    return (await res.json()) as Awaited<ReturnType<Served['callRaw']>>;
  };
  return {
    url: info.url,
    base,
    port: info.port,
    token,
    folder,
    otlp: info.otlp?.endpoint ?? null,
    callRaw,
    async call<T>(method: string, args: unknown = {}) {
      const r = await callRaw(method, args);
      if (!r.ok) throw new Error(`${method}: ${r.error?.code} ${r.error?.message}`);
      return r.value as T;
    },
    async has(method) {
      const r = await callRaw(method, {});
      return !(r.ok === false && /unknown method/.test(r.error?.message ?? ''));
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const force = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Writes a JSONL run in the seed's first format (no chain) into the folder, as another agent would. */
export function writeJsonl(folder: string, rel: string, lines: (object | string)[]): string {
  const file = path.join(folder, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  appendFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
}
