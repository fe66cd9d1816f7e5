import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ProofloopError } from '../../shared/result';
import { Ledger } from '../../electron/ledger';
import { exportBundle, openBundle, verifyBundle } from '../../electron/bundle';
import type { ZipLimits } from '../../electron/bundle/zip-read';
import { freshDir, rawZip, readZip, simpleRun, type RawEntry } from './bundle.helpers';

let dir: string;
let good: Map<string, Buffer>;

beforeEach(async () => {
  dir = freshDir();
  const ledger = Ledger.open(join(dir, 'runs'));
  simpleRun(ledger, 'r1', 6);
  await exportBundle(ledger, { runIds: ['r1'], out: join(dir, 'good.zip') });
  ledger.close();
  good = await readZip(join(dir, 'good.zip'));
});

const goodEntries = (): RawEntry[] => [...good].map(([name, data]) => ({ name, data }));

async function rejects(entries: RawEntry[], message: RegExp, limits?: ZipLimits) {
  const file = join(dir, `bad-${Math.random().toString(36).slice(2, 8)}.zip`);
  writeFileSync(file, rawZip(entries));
  const before = new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('proofloop-bundle-')));
  const err = await verifyBundle(file, { limits }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProofloopError);
  expect((err as ProofloopError).code).toBe('invalid_input');
  expect((err as ProofloopError).message).toMatch(message);
  // Opening refuses it the same way, and imports nothing.
  const ledger = Ledger.open(join(dir, 'viewer'));
  try {
    await expect(openBundle(ledger, file, { limits })).rejects.toThrow(message);
    expect(ledger.runs()).toEqual([]);
  } finally {
    ledger.close();
  }
  // The temporary folders this made are gone (others may be in use by parallel tests).
  const after = readdirSync(tmpdir()).filter((n) => n.startsWith('proofloop-bundle-') && !before.has(n));
  for (const n of after) expect(existsSync(join(tmpdir(), n, '0.bin'))).toBe(false);
}

describe('a bundle is untrusted input', () => {
  it('the raw zip writer makes bundles that verify (control)', async () => {
    const file = join(dir, 'raw.zip');
    writeFileSync(file, rawZip(goodEntries()));
    expect(await verifyBundle(file)).toMatchObject({ integrity: 'ok' });
  });

  it('an entry outside the archive root', async () => {
    await rejects(
      [...goodEntries(), { name: '../escaped.txt', data: Buffer.from('x') }],
      /relative path|leaves the archive root/,
    );
    await rejects(
      [...goodEntries(), { name: 'runs/../../escaped.txt', data: Buffer.from('x') }],
      /relative path|leaves/,
    );
    expect(existsSync(join(dirname(dir), 'escaped.txt'))).toBe(false);
    expect(existsSync(join(dir, 'escaped.txt'))).toBe(false);
  });

  it('an absolute path', async () => {
    await rejects(
      [...goodEntries(), { name: '/tmp/pl-absolute.txt', data: Buffer.from('x') }],
      /absolute path/,
    );
    await rejects([...goodEntries(), { name: 'C:/evil.txt', data: Buffer.from('x') }], /absolute path/);
    expect(existsSync('/tmp/pl-absolute.txt')).toBe(false);
  });

  it('a backslash path', async () => {
    await rejects(
      [...goodEntries(), { name: 'runs\\..\\..\\evil.txt', data: Buffer.from('x') }],
      /invalid characters|backslash/,
    );
  });

  it('a symbolic link', async () => {
    const entries = goodEntries().map((e) =>
      e.name === 'report.html' ? { ...e, data: Buffer.from('/etc/passwd'), mode: 0o120777 } : e,
    );
    await rejects(entries, /symbolic link/);
  });

  it('an entry larger than the bound, and sizes that expand beyond the total bound', async () => {
    await rejects(goodEntries(), /expands to \d+ bytes, more than 100/, {
      maxEntries: 100,
      maxEntryBytes: 100,
      maxTotalBytes: 1e9,
    });
    await rejects(goodEntries(), /more than 3000 bytes in all/, {
      maxEntries: 100,
      maxEntryBytes: 1e9,
      maxTotalBytes: 3000,
    });
    await rejects(goodEntries(), /entries, more than/, {
      maxEntries: 3,
      maxEntryBytes: 1e9,
      maxTotalBytes: 1e9,
    });
  });

  it('a declared size that lies', async () => {
    const entries = goodEntries().map((e) => (e.name === 'VERIFY.md' ? { ...e, declaredSize: 10 } : e));
    await rejects(entries, /VERIFY|size|expected/i);
  });

  it('an unknown entry', async () => {
    await rejects(
      [...goodEntries(), { name: 'notes.txt', data: Buffer.from('x') }],
      /unknown entry "notes.txt"/,
    );
    await rejects(
      [...goodEntries(), { name: 'runs/009-x/events.jsonl', data: Buffer.from('') }],
      /not listed in manifest/,
    );
  });

  it('a duplicate entry', async () => {
    const m = goodEntries().find((e) => e.name === 'manifest.json')!;
    await rejects([...goodEntries(), m], /duplicate entry "manifest.json"/);
    await rejects([...goodEntries(), { ...m, name: 'MANIFEST.json' }], /duplicate entry|unknown entry/);
  });

  it('a manifest that does not validate', async () => {
    const withManifest = (text: string) =>
      goodEntries().map((e) => (e.name === 'manifest.json' ? { ...e, data: Buffer.from(text) } : e));
    const m = JSON.parse(good.get('manifest.json')!.toString('utf8'));
    await rejects(withManifest('{not json'), /manifest.json is not JSON/);
    await rejects(withManifest(JSON.stringify({ ...m, format_version: 2 })), /manifest.json: format_version/);
    await rejects(withManifest(JSON.stringify({ ...m, extra: 1 })), /manifest.json: .*extra|unrecognized/i);
    await rejects(
      withManifest(JSON.stringify({ ...m, runs: [{ ...m.runs[0], dir: '../../etc' }] })),
      /manifest.json: runs\.0\.dir/,
    );
    await rejects(
      goodEntries().filter((e) => e.name !== 'manifest.json'),
      /has no manifest.json/,
    );
  });

  it('a file that is not a zip', async () => {
    const file = join(dir, 'not.zip');
    writeFileSync(file, 'hello, not a zip at all');
    await expect(verifyBundle(file)).rejects.toThrow(/not a valid bundle/);
  });
});
