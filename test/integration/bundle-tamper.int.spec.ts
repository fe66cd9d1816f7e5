import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Bytes } from '../../electron/crypto';
import { Ledger } from '../../electron/ledger';
import { exportBundle, verifyBundle as verifyOnce } from '../../electron/bundle';
import { main } from '../../electron/cli/main';
import { freshDir, homeIn, readZip, simpleRun, writeZip } from './bundle.helpers';

const EVENTS = 'runs/001-r1/events.jsonl';

/** Verifies in this thread and with worker threads: both must give the same verdict. */
async function verifyBundle(file: string, opts: { key?: string } = {}) {
  const here = await verifyOnce(file, { ...opts, workers: 0 });
  const pooled = await verifyOnce(file, { ...opts, workers: 2 });
  expect(pooled).toEqual(here);
  return here;
}

let dir: string;
let ledger: Ledger;
let restoreHome: () => void;
beforeEach(() => {
  dir = freshDir();
  restoreHome = homeIn(dir);
  ledger = Ledger.open(join(dir, 'runs'));
  simpleRun(ledger, 'r1', 30);
});
afterEach(() => {
  ledger.close();
  restoreHome();
});

async function bundle(sign: boolean): Promise<string> {
  const out = join(dir, sign ? 'signed.zip' : 'unsigned.zip');
  await exportBundle(ledger, { runIds: ['r1'], out, sign });
  return out;
}

/** Rewrites a bundle with `mutate` applied to its entries. */
async function tamper(file: string, mutate: (entries: Map<string, Buffer>) => void): Promise<string> {
  const entries = await readZip(file);
  mutate(entries);
  const out = file.replace(/\.zip$/, `-t${Math.random().toString(36).slice(2, 8)}.zip`);
  await writeZip(out, entries);
  return out;
}

const linesOf = (entries: Map<string, Buffer>, name = EVENTS) =>
  entries.get(name)!.toString('utf8').trimEnd().split('\n');
const setLines = (entries: Map<string, Buffer>, lines: string[], name = EVENTS) =>
  entries.set(name, Buffer.from(lines.map((l) => l + '\n').join(''), 'utf8'));

/** The manifest made consistent again with the entries, as a forger would (without the private key). */
function reseal(entries: Map<string, Buffer>): void {
  const m = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
  const lines = linesOf(entries).map((l) => JSON.parse(l));
  m.runs[0].events = lines.length;
  m.runs[0].last_seq = lines.at(-1).seq;
  m.runs[0].head_hash = lines.at(-1).hash;
  for (const name of Object.keys(m.files))
    m.files[name] = { sha256: sha256Bytes(entries.get(name)!), bytes: entries.get(name)!.length };
  entries.set('manifest.json', Buffer.from(JSON.stringify(m, null, 2) + '\n'));
}

describe('tampered bundles', () => {
  it('an untouched signed bundle verifies', async () => {
    expect(await verifyBundle(await bundle(true))).toMatchObject({
      ok: true,
      integrity: 'ok',
      completeness: 'ok',
      signature: 'valid',
      first_failure: null,
    });
  });

  it('a changed byte in an event: integrity fails at that seq', async () => {
    const file = await tamper(await bundle(true), (e) => {
      const lines = linesOf(e);
      lines[4] = lines[4]!.replace('"tokens":10', '"tokens":11');
      setLines(e, lines);
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, integrity: 'failed', completeness: 'ok', signature: 'valid' });
    expect(v.first_failure).toMatchObject({ run_id: 'r1', seq: 5 });
  });

  it('a changed byte in a redacted event: caught by the redacted-line hashes', async () => {
    const file = await tamper(await bundle(true), (e) => {
      const lines = linesOf(e);
      expect(lines[2]).toContain('"digest"');
      lines[2] = lines[2]!.replace('step 2', 'step 9');
      setLines(e, lines);
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, integrity: 'failed' });
    expect(v.first_failure).toMatchObject({ run_id: 'r1', seq: 3 });
    expect(v.first_failure!.reason).toMatch(/redacted_line_altered/);
  });

  it('a deleted line: integrity and completeness fail at the missing seq', async () => {
    const file = await tamper(await bundle(true), (e) => {
      const lines = linesOf(e);
      lines.splice(6, 1);
      setLines(e, lines);
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, integrity: 'failed', completeness: 'failed' });
    expect(v.first_failure).toMatchObject({ run_id: 'r1', seq: 7 });
  });

  it('two lines swapped: integrity fails at the first of them', async () => {
    const file = await tamper(await bundle(true), (e) => {
      const lines = linesOf(e);
      [lines[7], lines[8]] = [lines[8]!, lines[7]!];
      setLines(e, lines);
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, integrity: 'failed', completeness: 'ok' });
    expect(v.first_failure).toMatchObject({ run_id: 'r1', seq: 8 });
  });

  it('a cut-off tail of a signed bundle: incomplete, not altered', async () => {
    const file = await tamper(await bundle(true), (e) => setLines(e, linesOf(e).slice(0, 25)));
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, integrity: 'ok', completeness: 'failed', signature: 'valid' });
    expect(v.first_failure).toMatchObject({ run_id: 'r1', seq: 26 });
    expect(v.first_failure!.reason).toMatch(/tail_missing/);
  });

  it('a cut-off tail with the manifest forged to match: the signature breaks', async () => {
    const file = await tamper(await bundle(true), (e) => {
      setLines(e, linesOf(e).slice(0, 25));
      reseal(e);
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, integrity: 'failed', signature: 'invalid' });
    expect(v.completeness).not.toBe('ok');
  });

  it('a cut-off tail of an unsigned bundle with a forged manifest: completeness is unknown, and says so', async () => {
    const file = await tamper(await bundle(false), (e) => {
      setLines(e, linesOf(e).slice(0, 25));
      reseal(e);
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: true, integrity: 'ok', completeness: 'unknown', signature: 'absent' });
    expect(v.findings.find((f) => f.code === 'completeness_unproven')!.message).toMatch(/cut off/);
    // The run's own row says so too: its manifest entry was cut down with it.
    expect(v.runs.map((r) => r.completeness)).toEqual(['unknown']);
  });

  it('a changed manifest: the signature is invalid', async () => {
    const file = await tamper(await bundle(true), (e) => {
      const m = JSON.parse(e.get('manifest.json')!.toString('utf8'));
      m.runs[0].status = 'failed';
      e.set('manifest.json', Buffer.from(JSON.stringify(m, null, 2) + '\n'));
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({
      ok: false,
      integrity: 'failed',
      signature: 'invalid',
      completeness: 'unknown',
    });
    expect(v.first_failure!.reason).toMatch(/signature_invalid/);
  });

  it('a changed manifest count in an unsigned bundle: the events do not match it', async () => {
    const file = await tamper(await bundle(false), (e) => {
      const m = JSON.parse(e.get('manifest.json')!.toString('utf8'));
      m.runs[0].events = 31;
      m.runs[0].last_seq = 31;
      e.set('manifest.json', Buffer.from(JSON.stringify(m, null, 2) + '\n'));
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, completeness: 'failed' });
  });

  it('a run swapped in from another bundle: integrity fails at seq 1 of that run', async () => {
    const mine = await bundle(true);
    const otherLedger = Ledger.open(join(dir, 'other'));
    simpleRun(otherLedger, 'r1', 30, 'elsewhere');
    const theirs = join(dir, 'theirs.zip');
    await exportBundle(otherLedger, { runIds: ['r1'], out: theirs });
    otherLedger.close();
    const foreign = await readZip(theirs);
    const file = await tamper(mine, (e) => {
      e.set(EVENTS, foreign.get(EVENTS)!);
      e.set('runs/001-r1/redactions.txt', foreign.get('runs/001-r1/redactions.txt')!);
    });
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, integrity: 'failed', signature: 'valid' });
    expect(v.first_failure).toMatchObject({ run_id: 'r1', seq: 1 });
    expect(v.first_failure!.reason).toMatch(/first_hash_mismatch/);
  });

  it('a wrong key: the signature verdict is wrong_key and the CLI exits 1', async () => {
    const file = await bundle(true);
    const other = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const keyFile = join(dir, 'other.pub');
    writeFileSync(keyFile, other);
    const v = await verifyBundle(file, { key: keyFile });
    expect(v).toMatchObject({ ok: false, signature: 'wrong_key', integrity: 'ok', completeness: 'unknown' });

    const orig = process.stdout.write.bind(process.stdout);
    const out: string[] = [];
    process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
    let code: number;
    try {
      process.exitCode = 0;
      code = await main(['--json', 'verify-bundle', file, '--key', keyFile]);
    } finally {
      process.stdout.write = orig;
      process.exitCode = 0;
    }
    expect(code).toBe(1);
    expect(JSON.parse(out.join(''))).toMatchObject({ signature: 'wrong_key', ok: false });
  });

  it('a signature stripped from a signed bundle is not taken for an unsigned one', async () => {
    const file = await tamper(await bundle(true), (e) => e.delete('manifest.sig'));
    const v = await verifyBundle(file);
    expect(v).toMatchObject({ ok: false, signature: 'invalid', integrity: 'failed' });
  });
});
