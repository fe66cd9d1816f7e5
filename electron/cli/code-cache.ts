import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { Module, createRequire } from 'node:module';
import path from 'node:path';
import { Script } from 'node:vm';
import { BEFORE_FLAGS_CHANGE, isLean, type FlagsMode } from '../lean';

// bin/proofloop.js puts serve in lean mode through this bundle's copy of lean.ts (its flags set in
// one place), so the loader knows which flags the CLI's code is compiled under.
export { goLean } from '../lean';

/**
 * Loads the CLI's CommonJS bundle (dist/cli.cjs and its chunks) with V8's code cache, the compiled
 * bytecode of an earlier start kept beside the bundle, so that a start does not parse and compile
 * the same ~550 KB of JavaScript again. `serve` printed its URL after 120 ms against 148 ms without
 * (bench/peer.ts's small folder, 12 starts each alternating), and the first calls of the page run
 * code already compiled. Node 22's `module.enableCompileCache()` does this for ES modules; Node 20
 * has no code cache for ES modules at all, hence CommonJS chunks (scripts/build.mjs) and this
 * loader: `vm.Script`'s `cachedData`, read and written here.
 *
 * A cache is made after the code has run (`createCachedData()` at exit), so it holds the functions
 * a command compiled lazily, not only the top level. V8 checks its own version and flags and the
 * source's length, not the source itself: each file also carries the SHA-256 of the source it was
 * made from. V8's flags differ between `serve` (lean: electron/lean.ts) and every other command, and
 * a cache made under other flags is rejected, so there is one cache per mode. Where the cache
 * cannot be written (a read-only install) the CLI runs as without it.
 *
 * PROOFLOOP_CODE_CACHE: the folder for the cache (default: dist/code-cache), or `0` for none.
 * PROOFLOOP_DEBUG=1 says on stderr what was read and written.
 */

const MAGIC = Buffer.from('PLCC1\n');
const HEADER = MAGIC.length + 32 + 4; // magic, SHA-256 of the source, CPU ms of the writing process
// A cache from a process that worked this many times longer holds more compiled functions: rewrite.
const RICHER = 2;

interface Loaded {
  file: string;
  script: Script;
  sha: Buffer;
  /** The flags it was compiled under. */
  mode: FlagsMode;
  /** The CPU ms of the process that made the cache V8 accepted for it, or null: none or rejected. */
  acceptedCpuMs: number | null;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return Math.round((u.user + u.system) / 1000);
};

function cacheDirFor(distDir: string, env = process.env): string | null {
  const v = env.PROOFLOOP_CODE_CACHE;
  if (v === '0') return null;
  return v ? path.resolve(v) : path.join(distDir, 'code-cache');
}

function cacheFile(dir: string, script: string, mode: FlagsMode): string {
  return path.join(dir, `${path.basename(script)}.${mode}.bin`);
}

/**
 * Requires `entry` (a CommonJS file) with the code cache for every `.cjs` file in its folder whose
 * name starts like the entry's (its chunks), compiled under V8's flags as lean.ts has set them.
 */
export function loadWithCodeCache<T>(entry: string, env = process.env): T {
  const distDir = path.dirname(entry);
  const dir = cacheDirFor(distDir, env);
  const say = env.PROOFLOOP_DEBUG === '1' ? (m: string) => process.stderr.write(`code cache: ${m}\n`) : null;
  const requireEntry = () => createRequire(entry)(entry) as T;
  if (!dir) return requireEntry();

  const prefix = path.basename(entry).replace(/\.cjs$/, '');
  const loaded: Loaded[] = [];
  let mode: FlagsMode = isLean() ? 'lean' : 'full';
  const extensions = (Module as unknown as { _extensions: Record<string, (m: Module, f: string) => void> })
    ._extensions;
  const plain = extensions['.cjs']!;
  extensions['.cjs'] = (m, file) => {
    if (path.dirname(file) !== distDir || !path.basename(file).startsWith(prefix)) return plain(m, file);
    // CommonJS's own wrapper, as Module.prototype._compile makes it; a shebang line is no JavaScript.
    const source = readFileSync(file, 'utf8').replace(/^#!.*/, '');
    const sha = createHash('sha256').update(source).digest();
    const stored = readCache(cacheFile(dir, file, mode), sha);
    const script = new Script(Module.wrap(source), { filename: file, cachedData: stored?.data });
    const acceptedCpuMs = stored && !script.cachedDataRejected ? stored.cpuMs : null;
    say?.(
      `${path.basename(file)}: ${stored ? (acceptedCpuMs !== null ? 'used' : 'rejected by V8') : 'none'} (${mode} flags)`,
    );
    loaded.push({ file, script, sha, mode, acceptedCpuMs });
    const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
    const mod = m as Module & { filename: string };
    wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, path.dirname(file));
  };

  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    const spent = cpuMs();
    for (const l of loaded) {
      const target = cacheFile(dir, l.file, mode);
      // What V8 accepted stays, unless this process ran much longer (and compiled more) than the
      // one that made it. A cache for the other mode is made once, when there is none.
      if (l.mode === mode) {
        if (l.acceptedCpuMs !== null && spent < l.acceptedCpuMs * RICHER) continue;
      } else if (cacheMatches(target, l.sha)) continue;
      try {
        mkdirSync(dir, { recursive: true });
        const header = Buffer.alloc(HEADER);
        MAGIC.copy(header);
        l.sha.copy(header, MAGIC.length);
        header.writeUInt32LE(Math.min(spent, 0xffffffff), MAGIC.length + 32);
        // Another process may write the same file now: each writes its own and renames it in place.
        const tmp = `${target}.${process.pid}.tmp`;
        writeFileSync(tmp, Buffer.concat([header, l.script.createCachedData()]));
        renameSync(tmp, target);
        say?.(`${path.basename(l.file)}: written (${mode} flags, after ${spent} ms of CPU)`);
      } catch (e) {
        say?.(`${path.basename(l.file)}: not written: ${(e as Error).message}`);
        return;
      }
    }
  };
  // Caches made after V8's flags change would carry the new ones: what this mode compiled is kept first.
  (globalThis as Record<symbol, unknown>)[BEFORE_FLAGS_CHANGE] = (next: FlagsMode) => {
    if (next === mode) return;
    write();
    mode = next;
    written = false;
  };
  process.on('exit', write);
  return requireEntry();
}

/** Whether a cache file's header is ours and names this source (its data is not read). */
const headerMatches = (header: Buffer, sha: Buffer) =>
  header.subarray(0, MAGIC.length).equals(MAGIC) &&
  header.subarray(MAGIC.length, MAGIC.length + 32).equals(sha);

function readCache(file: string, sha: Buffer): { data: Buffer; cpuMs: number } | null {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return null;
  }
  if (buf.length <= HEADER || !headerMatches(buf, sha)) return null;
  return { data: buf.subarray(HEADER), cpuMs: buf.readUInt32LE(MAGIC.length + 32) };
}

/**
 * Whether there is a cache for this source, from its header alone: at exit, for the other mode's
 * file, whose data this process would not use (the whole file is ~0.5 MB for the CLI's chunks).
 */
function cacheMatches(file: string, sha: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const header = Buffer.alloc(HEADER + 1);
    // One byte past the header: a file with no data is no cache.
    return readSync(fd, header, 0, header.length, 0) === header.length && headerMatches(header, sha);
  } finally {
    closeSync(fd);
  }
}
