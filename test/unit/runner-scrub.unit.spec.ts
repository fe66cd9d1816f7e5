/**
 * What a real agent's run leaves on disk (scrub.ts) and how its processes are found (proctree.ts),
 * on real files and real child processes.
 */
import { spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  descendants,
  killUntilGone,
  processes,
  runProcesses,
  type Proc,
} from '../../electron/runner/proctree';
import {
  changedConfigFiles,
  configDirDigest,
  pruneHome,
  redactJsonLines,
  scrubWorkspace,
} from '../../electron/runner/scrub';

const AWS = 'AKIAPROOFLOOPTEST001';
const GH = 'ghp_ProofLoopFakeToken0123456789abcdefgh';
let dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'pl-scrub-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe('redactJsonLines', () => {
  it('replaces credentials inside JSON values, keeps every line valid JSON and leaves clean lines byte for byte', () => {
    const f = path.join(fresh(), 'rollout.jsonl');
    const clean = '{"type":"x",  "spaced": true}';
    const dirty = JSON.stringify({ output: `AWS_ACCESS_KEY_ID=${AWS}\nGITHUB_TOKEN=${GH}\n` });
    writeFileSync(f, `${clean}\n${dirty}\nnot json ${GH}\n`);
    expect(redactJsonLines(f)).toBe(3);
    const lines = readFileSync(f, 'utf8').split('\n');
    expect(lines[0]).toBe(clean);
    expect(JSON.parse(lines[1]!).output).not.toContain(AWS);
    expect(lines[2]).not.toContain(GH);
    expect(lines[3]).toBe('');
    // Nothing more to do the second time: the file is not rewritten.
    expect(redactJsonLines(f)).toBe(0);
  });
});

describe('pruneHome', () => {
  it('removes every file, link and emptied folder but the kept transcripts', () => {
    const home = fresh();
    const keep = path.join(home, '.codex', 'sessions', '2026', 'rollout-a.jsonl');
    mkdirSync(path.dirname(keep), { recursive: true });
    writeFileSync(keep, '{}\n');
    mkdirSync(path.join(home, 'tmp', 'deep', 'er'), { recursive: true });
    writeFileSync(path.join(home, 'tmp', 'deep', 'er', 'snap.sh'), `export GITHUB_TOKEN=${GH}\n`);
    writeFileSync(path.join(home, '.codex', 'config.toml'), 'x = 1\n');
    const outside = path.join(fresh(), 'outside.txt');
    writeFileSync(outside, 'not the run’s');
    symlinkSync(outside, path.join(home, 'link'));
    expect(pruneHome(home, [keep])).toBe(3);
    const left = readdirSync(home, { recursive: true }).map(String).sort();
    expect(left).toEqual([
      '.codex',
      '.codex/sessions',
      '.codex/sessions/2026',
      '.codex/sessions/2026/rollout-a.jsonl',
    ]);
    // A link is removed as a link: what it pointed at is untouched.
    expect(readFileSync(outside, 'utf8')).toBe('not the run’s');
  });
});

describe('scrubWorkspace', () => {
  it('redacts text files in place, names them with their count, leaves binary files alone', () => {
    const ws = fresh();
    writeFileSync(
      path.join(ws, '.env'),
      `# settings\nAWS_ACCESS_KEY_ID=${AWS}\nGITHUB_TOKEN=${GH}\nREGION=eu-west-1\n`,
    );
    mkdirSync(path.join(ws, 'lib'));
    writeFileSync(path.join(ws, 'lib', 'a.js'), 'module.exports = 1;\n');
    const bin = Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(GH)]);
    writeFileSync(path.join(ws, 'blob.bin'), bin);
    const r = scrubWorkspace(ws);
    expect(r).toEqual({ files: [{ path: '.env', credentials: 2 }], skipped: [] });
    const env = readFileSync(path.join(ws, '.env'), 'utf8');
    expect(env).not.toContain(AWS);
    expect(env).not.toContain(GH);
    expect(env).toContain('REGION=eu-west-1');
    expect(readFileSync(path.join(ws, 'blob.bin')).equals(bin)).toBe(true);
  });
});

describe('configDirDigest', () => {
  it('lists each file by digest, never its content; a change names the file', () => {
    const d = fresh();
    writeFileSync(path.join(d, 'AGENTS.md'), 'Keep changes small.\n');
    mkdirSync(path.join(d, 'hooks'));
    writeFileSync(path.join(d, 'hooks', 'h.sh'), 'echo hi\n');
    const a = configDirDigest(d);
    expect(Object.keys(a.files)).toEqual(['AGENTS.md', 'hooks/h.sh']);
    expect(JSON.stringify(a)).not.toContain('Keep changes small');
    writeFileSync(path.join(d, 'AGENTS.md'), 'Explain each change.\n');
    writeFileSync(path.join(d, 'settings.json'), '{}');
    const b = configDirDigest(d);
    expect(b.digest).not.toBe(a.digest);
    expect(changedConfigFiles(a.files, b.files)).toEqual(['AGENTS.md', 'settings.json']);
    expect(() => configDirDigest(path.join(d, 'nope'))).toThrow(/--config .*nope: not a folder/);
  });
});

describe('proctree', () => {
  it('descendants: the roots and their subtrees, breadth first; an unknown root is nothing', () => {
    const t: Proc[] = [
      { pid: 1, ppid: 0, cmd: 'init', cwd: null },
      { pid: 10, ppid: 1, cmd: 'agent', cwd: null },
      { pid: 11, ppid: 10, cmd: 'sh -c x', cwd: null },
      { pid: 12, ppid: 11, cmd: 'x', cwd: null },
      { pid: 20, ppid: 1, cmd: 'other', cwd: null },
    ];
    expect(descendants(t, [10]).map((p) => p.pid)).toEqual([10, 11, 12]);
    expect(descendants(t, [99])).toEqual([]);
  });

  it('finds a process working inside the run folder, with its children, after its parent let it go, and kills them all', async () => {
    const run = fresh();
    const ws = path.join(run, 'workspace');
    mkdirSync(ws);
    // A detached shell whose child sleeps on: an orphan of the kind an agent leaves behind.
    const sh = spawn('sh', ['-c', 'sleep 30 & sleep 30'], { cwd: ws, detached: true, stdio: 'ignore' });
    sh.unref();
    // The shell forks its two sleeps when the machine lets it: a fixed wait of 300 ms found fewer
    // than three on a loaded one. Look until the tree is whole (the shell and both sleeps), 10 s at most.
    let found = runProcesses(run);
    for (const end = Date.now() + 10_000; found.length < 3 && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 50));
      found = runProcesses(run);
    }
    expect(found.map((p) => p.pid)).toContain(sh.pid);
    expect(found.length).toBeGreaterThanOrEqual(3);
    expect(found.map((p) => p.pid)).not.toContain(process.pid);
    const killed = await killUntilGone(() => runProcesses(run));
    expect(killed).toEqual(expect.arrayContaining(found.map((p) => p.pid)));
    expect(runProcesses(run)).toEqual([]);
    expect(processes().some((p) => p.pid === sh.pid)).toBe(false);
  });
});
