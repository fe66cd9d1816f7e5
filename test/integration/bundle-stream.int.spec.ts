import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Bytes } from '../../electron/crypto';
import { Ledger } from '../../electron/ledger';
import { exportBundle, verifyBundle } from '../../electron/bundle';
import { analyzeBytes, analyzeLines } from '../../electron/bundle/lines';
import { startVerifyPool } from '../../electron/bundle/verify-pool';
import type { BundleVerdict } from '../../electron/bundle/format';
import { freshDir, homeIn, readZip, simpleRun, writeZip } from './bundle.helpers';

// verify-bundle reads a zip in one pass (streamBundle: nothing on disk, events.jsonl cut into blocks
// of lines as it inflates and analysed in worker threads meanwhile). The extract-then-read path
// (still openBundle's) is the reference: on every tampered bundle, both must give the same report,
// with and without worker threads. The big run's events.jsonl spans several blocks of lines.
const BIG = 'runs/001-big/events.jsonl';

let dir: string;
let restoreHome: () => void;
let signed: string;
let entries: Map<string, Buffer>;

beforeAll(async () => {
  dir = freshDir();
  restoreHome = homeIn(dir);
  const ledger = Ledger.open(join(dir, 'runs'));
  try {
    simpleRun(ledger, 'big', 6_000);
    simpleRun(ledger, 'small', 30, 'x');
    signed = join(dir, 'signed.zip');
    await exportBundle(ledger, { runIds: ['big', 'small'], out: signed, sign: true, workers: 0 });
  } finally {
    ledger.close();
  }
  entries = await readZip(signed);
  expect(entries.get(BIG)!.length).toBeGreaterThan(1024 * 1024);
});
afterAll(() => restoreHome());

let n = 0;
/** A copy of the bundle with its entries changed by `mutate` (in the order of the map). */
async function tampered(mutate: (e: Map<string, Buffer>) => Map<string, Buffer> | void): Promise<string> {
  const copy = new Map([...entries].map(([k, v]) => [k, Buffer.from(v)]));
  const out = join(dir, `t${n++}.zip`);
  await writeZip(out, mutate(copy) ?? copy);
  return out;
}

const lines = (e: Map<string, Buffer>, name = BIG) => e.get(name)!.toString('utf8').split('\n');
const setText = (e: Map<string, Buffer>, text: string, name = BIG) => e.set(name, Buffer.from(text, 'utf8'));

/** The streaming report, in this thread and with workers, and the extract-then-read one: all equal. */
async function sameReports(file: string): Promise<BundleVerdict> {
  const reference = await verifyBundle(file, {}, { onRun: () => undefined });
  const here = await verifyBundle(file, { workers: 0 });
  const pooled = await verifyBundle(file, { workers: 2 });
  expect(here).toEqual(reference);
  expect(pooled).toEqual(reference);
  return reference;
}

describe('streaming verify-bundle', () => {
  it('an untouched bundle', async () => {
    const v = await sameReports(signed);
    expect(v).toMatchObject({ ok: true, integrity: 'ok', completeness: 'ok' });
    expect(v.runs.map((r) => r.events)).toEqual([6_000, 30]);
  });

  it('a changed event in each block of lines, and at the block edges', async () => {
    const file = await tampered((e) => {
      const l = lines(e);
      for (const i of [3, 2_600, 2_601, 5_200, 5_998])
        l[i] = l[i]!.replace(/"tokens_(before|after)":\d+/, '"tokens_$1":0');
      setText(e, l.join('\n'));
    });
    const v = await sameReports(file);
    expect(v).toMatchObject({ integrity: 'failed' });
  });

  it('a line with a duplicated payload key: the digest covers the payload readers parse', async () => {
    const file = await tampered((e) => {
      const l = lines(e);
      const o = JSON.parse(l[4_000]!) as { payload: unknown };
      // Readers take the last "payload"; the first one is the original, which the hash covers.
      l[4_000] = l[4_000]!.replace(/}$/, `,"payload":{"op":"append","tokens_before":1,"tokens_after":2}}`);
      expect((JSON.parse(l[4_000]!) as { payload: unknown }).payload).not.toEqual(o.payload);
      setText(e, l.join('\n'));
    });
    const v = await sameReports(file);
    expect(v).toMatchObject({ integrity: 'failed' });
    expect(v.first_failure).toMatchObject({ run_id: 'big', seq: 4_001 });
  });

  it('broken JSON, an invalid envelope, an upper-case prev', async () => {
    for (const edit of [
      (l: string) => l.slice(0, 40),
      (l: string) => l.replace('"v":1', '"v":0'),
      (l: string) => l.replace(/"prev":"([0-9a-f]{64})"/, (_m, h: string) => `"prev":"${h.toUpperCase()}"`),
      (l: string) => l.replace(/"hash":"[0-9a-f]{64}"/, `"hash":"${'g'.repeat(64)}"`),
    ]) {
      const file = await tampered((e) => {
        const l = lines(e);
        l[3_500] = edit(l[3_500]!);
        setText(e, l.join('\n'));
      });
      const v = await sameReports(file);
      expect(v).toMatchObject({ integrity: 'failed' });
      expect(v.first_failure).toMatchObject({ run_id: 'big', seq: 3_501 });
    }
  });

  it('a last line without newline, a cut tail, an empty events file', async () => {
    for (const edit of [
      (t: string) => t.slice(0, t.length - 30),
      (t: string) => t.slice(0, t.indexOf('\n', t.length / 2) + 1),
      () => '',
    ]) {
      const file = await tampered((e) => setText(e, edit(e.get(BIG)!.toString('utf8'))));
      const v = await sameReports(file);
      expect(v.ok).toBe(false);
    }
  });

  it('events.jsonl before manifest.json in the zip, and a missing run', async () => {
    const reordered = await tampered((e) => new Map([...e].reverse()));
    expect(await sameReports(reordered)).toMatchObject({ ok: true });
    const missing = await tampered((e) => void e.delete(BIG));
    expect(await sameReports(missing)).toMatchObject({ ok: false, completeness: 'failed' });
  });

  it('altered redactions.txt, report.html and state.json', async () => {
    for (const name of ['runs/001-big/redactions.txt', 'report.html', 'runs/002-small/state.json']) {
      const file = await tampered((e) => void e.set(name, Buffer.concat([e.get(name)!, Buffer.from('\n')])));
      const v = await sameReports(file);
      expect(v).toMatchObject({ integrity: 'failed' });
      expect(v.findings.some((f) => f.code === 'file_hash_mismatch')).toBe(true);
    }
  });

  it('a deflated entry whose declared size lies, either way: refused', async () => {
    for (const [name, delta] of [
      ['report.html', -100],
      ['report.html', 100],
      [BIG, -1],
      [BIG, 1],
    ] as const) {
      const file = await tampered(() => undefined);
      const zip = readFileSync(file);
      // The size in the central directory entry (yauzl takes sizes from there).
      let at = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
      while (zip.toString('utf8', at + 46, at + 46 + zip.readUInt16LE(at + 28)) !== name)
        at = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 4);
      expect(zip.readUInt16LE(at + 10)).toBe(8);
      zip.writeUInt32LE(zip.readUInt32LE(at + 24) + delta, at + 24);
      writeFileSync(file, zip);
      for (const workers of [0, 2]) {
        await expect(verifyBundle(file, { workers })).rejects.toThrow(
          new RegExp(
            `not a valid bundle: entry "${name}" (expands beyond its declared size|has \\d+ bytes, not the)`,
          ),
        );
      }
    }
  });

  it('a manifest that is not valid: the same error', async () => {
    // Not a manifest at all; and one whose runs are intact (their events are analysed meanwhile) but
    // that fails its schema.
    const broken = JSON.parse(entries.get('manifest.json')!.toString('utf8')) as Record<string, unknown>;
    for (const text of ['{"format": 1}', JSON.stringify({ ...broken, format_version: 99 })]) {
      const file = await tampered((e) => void e.set('manifest.json', Buffer.from(text)));
      const errors = await Promise.all(
        [
          verifyBundle(file, {}, { onRun: () => undefined }),
          verifyBundle(file, { workers: 0 }),
          verifyBundle(file, { workers: 2 }),
        ].map((p) =>
          p.then(
            () => 'verified',
            (e: Error) => e.message,
          ),
        ),
      );
      expect(errors[0]).toMatch(/not a valid bundle: manifest.json/);
      expect(errors[1]).toBe(errors[0]);
      expect(errors[2]).toBe(errors[0]);
    }
  });
});

/**
 * The analysis of lines before the verify workers imported the protocol's digest (a canonical-JSON
 * loop of their own, every 64-hex field checked by regex, in this order), as the reference.
 */
function referenceFlags(text: string, runId: string): { flags: number[]; problem: string | null } {
  const HEX = /^[0-9a-f]{64}$/;
  const canon = (v: unknown): string => {
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
    const o = v as Record<string, unknown>;
    return (
      '{' +
      Object.keys(o)
        .sort()
        .map((k) => JSON.stringify(k) + ':' + canon(o[k]))
        .join(',') +
      '}'
    );
  };
  const flags: number[] = [];
  let last = '';
  for (const line of text.split('\n').slice(0, -1)) {
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return { flags, problem: 'not JSON' };
    }
    let why: string | null = null;
    if (o === null || typeof o !== 'object' || Array.isArray(o)) why = 'not a JSON object';
    else if (!Number.isSafeInteger(o.seq) || (o.seq as number) < 1 || (o.seq as number) > 2 ** 32 - 1)
      why = `seq is not an integer from 1 to ${2 ** 32 - 1}`;
    else if (typeof o.run_id !== 'string') why = 'run_id is not a string';
    else if (typeof o.kind !== 'string' || o.kind.length < 1 || o.kind.length > 200)
      why = 'kind is not a string of 1 to 200 characters';
    else if (!Number.isSafeInteger(o.v) || (o.v as number) < 1) why = 'v is not a positive integer';
    else if (typeof o.at !== 'string') why = 'at is not a string';
    else if (o.payload === null || typeof o.payload !== 'object' || Array.isArray(o.payload))
      why = 'payload is not an object';
    else if (typeof o.prev !== 'string' || !HEX.test(o.prev)) why = 'prev is not 64 hex digits';
    else if (typeof o.hash !== 'string' || !HEX.test(o.hash)) why = 'hash is not 64 hex digits';
    else if (o.digest !== undefined && (typeof o.digest !== 'string' || !HEX.test(o.digest)))
      why = 'digest is not 64 hex digits';
    if (why) return { flags, problem: why };
    const sha = (s: string) => sha256Bytes(Buffer.from(s, 'utf8'));
    const digest =
      typeof o.digest === 'string'
        ? o.digest
        : sha(
            `{"at":${JSON.stringify(o.at)},"kind":${JSON.stringify(o.kind)},"payload":${canon(o.payload)},` +
              `"run_id":${JSON.stringify(o.run_id)},"seq":${o.seq as number},"v":${o.v as number}}`,
          );
    let f = sha((o.prev as string) + digest) === o.hash ? 1 : 0;
    if (o.run_id === runId) f |= 2;
    if (typeof o.digest === 'string') f |= 4;
    if (flags.length > 0 && o.prev === last) f |= 8;
    last = o.hash as string;
    flags.push(f);
  }
  return { flags, problem: null };
}

describe('analyzeLines', () => {
  it('gives the flags and problems of the reference on altered lines', () => {
    const good = entries.get(BIG)!.toString('utf8').split('\n').slice(0, 40);
    const edits: ((l: string) => string)[] = [
      (l) => l,
      (l) => l.replace('"tokens":10', '"tokens":11'),
      (l) => l.replace(/"prev":"[0-9a-f]/, '"prev":"A'),
      (l) => l.replace(/"hash":"[0-9a-f]/, '"hash":"A'),
      (l) => l.replace(/"hash":"[0-9a-f]{64}"/, '"hash":"abc"'),
      (l) => l.replace(/}$/, ',"digest":"xyz"}'),
      (l) => l.replace(/"hash":"[0-9a-f]/, '"hash":"A').replace(/}$/, ',"digest":"xyz"}'),
      (l) => l.replace(/}$/, `,"digest":"${'0'.repeat(64)}"}`),
      (l) => l.replace('"kind":"', '"kind":"X'),
      (l) => l.replace(/"kind":"[a-z_]+"/, '"kind":""'),
      (l) => l.replace('"run_id":"big"', '"run_id":"other"'),
      (l) => l.replace(/}$/, ',"payload":{"a":1}}'),
      (l) => l.replace('"payload":{', '"payload":{"9":[1,{"b":null,"a":"é"}],'),
      (l) => l.slice(0, 30),
    ];
    for (let at = 0; at < 6; at++) {
      for (const edit of edits) {
        const l = [...good];
        l[at] = edit(l[at]!);
        const text = l.join('\n') + '\n';
        const want = referenceFlags(text, 'big');
        const got = analyzeLines(text, 'big', false);
        expect([...got.flags]).toEqual(want.flags);
        expect(got.problem?.message ?? null).toBe(want.problem);
      }
    }
  });

  it('reads bytes as their whole text, across the pieces they are decoded in', () => {
    const good = entries.get(BIG)!.toString('utf8').split('\n').slice(0, 1200);
    const long = good[3]!.replace('"payload":{', `"payload":{"long":"${'é'.repeat(70_000)}",`);
    // Line k starts the second piece (pieces are whole lines of at most 96 KiB).
    let k = 0;
    for (let at = 0; at + Buffer.byteLength(good[k]!) + 1 <= 96 * 1024; k++)
      at += Buffer.byteLength(good[k]!) + 1;
    const cases = [
      good, // ~250 KB: several 96 KiB pieces
      [...good.slice(0, 3), long, ...good.slice(4)], // a line longer than a piece
      [...good.slice(0, k), '\uFEFF' + good[k]!, ...good.slice(k + 1)], // a BOM starting a piece: not JSON
      [...good.slice(0, 500), good[500]!.slice(0, 40)], // a cut last line
    ];
    for (const lines of cases) {
      const text = lines.join('\n') + (lines === cases[3] ? '' : '\n');
      const got = analyzeBytes(Buffer.from(text, 'utf8'), 'big', false);
      const want = analyzeLines(text, 'big', false);
      expect(got).toEqual(want);
      expect(got.count).toBeGreaterThan(200);
    }
    // The BOM line is where it stops, though it starts a piece.
    expect(analyzeBytes(Buffer.from(cases[2]!.join('\n') + '\n'), 'big', false).problem).toMatchObject({
      index: k,
      code: 'broken_json',
    });
  });
});

describe('verify pool', () => {
  it('gives the same results for jobs this thread takes back from a worker’s queue (steal)', async () => {
    const bytes = entries.get(BIG)!;
    const blocks: Buffer[] = [];
    for (let at = 0; at < bytes.length && blocks.length < 6;) {
      const end = bytes.indexOf(10, at + 100_000) + 1 || bytes.length;
      blocks.push(bytes.subarray(at, end));
      at = end;
    }
    expect(blocks).toHaveLength(6);
    const pool = startVerifyPool(1, 3)!;
    try {
      // Three go to the worker (still starting), three wait for this thread; steal takes those and
      // the worker's last two, which it replies it did not do.
      const results = blocks.map((b) => pool.analyze(b, 'big'));
      pool.steal();
      expect(await Promise.all(results)).toEqual(blocks.map((b) => analyzeBytes(b, 'big', false)));
      // The claims are free again: the pool still works.
      expect(await pool.analyze(blocks[0]!, 'big')).toEqual(analyzeBytes(blocks[0]!, 'big', false));
    } finally {
      await pool.close();
    }
  });
});
