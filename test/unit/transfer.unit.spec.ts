import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { eachLineResult, parseBlock, type LineResult } from '../../electron/ingest/block';
import { detectText, type ParsedEvent } from '../../electron/ingest/parse';
import { Packer, packResults, unpackResults } from '../../electron/ingest/transfer';
import { generateFile } from '../../bench/ingest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

const FIXTURES = path.resolve(__dirname, '../fixtures');

function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) stack.push(p);
      else if (name.endsWith('.jsonl')) out.push(p);
    }
  }
  return out.sort();
}

/** What the main thread reads of a result: everything but a packed event's payload object. */
function withoutPayloads(results: LineResult[]): unknown[] {
  const strip = (r: LineResult): unknown => {
    if (r.t === 'ev') return { ...r, payload: undefined };
    if (r.t === 'multi') return { t: 'multi', list: r.list.map(strip) };
    return r;
  };
  return results.map(strip);
}

/** A block of complete lines, as the reader hands the workers (a cut last line is left out). */
function blockOf(file: string): Buffer {
  const buf = readFileSync(file);
  return buf.subarray(0, buf.lastIndexOf(10) + 1);
}

describe('parse results as workers post them back (transfer.ts)', () => {
  const files = jsonlFiles(FIXTURES);

  it('finds fixtures of every format to pack', () => {
    const formats = new Set(files.map((f) => detectText(readFileSync(f, 'utf8').split('\n')[0]!)));
    for (const f of ['claude_code', 'codex', 'seed000', 'seed004', 'proofloop']) expect(formats).toContain(f);
  });

  it.each(files.map((f) => [path.relative(FIXTURES, f), f]))(
    '%s: unpacked results equal the parsed ones, payload objects aside',
    (_name, file) => {
      const buf = blockOf(file);
      const fmt = detectText(buf.toString('utf8').split('\n')[0]!);
      const results = parseBlock(buf, fmt);
      const packed = packResults(results);
      const back = unpackResults(structuredClone(packed));
      expect(withoutPayloads(back)).toEqual(withoutPayloads(results));
      // Events travel as columns unless their original payload is still to be digested (redacted).
      const cloned = packed.other.filter(([, r]) => r.t === 'ev' || r.t === 'multi');
      expect(cloned.length).toBeLessThanOrEqual(Math.ceil(results.length / 10));
    },
  );

  it('packs nearly every line of a generated ProofLoop file as columns, digests included', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'pl-transfer-')), 'events.jsonl');
    generateFile(file, 2_000, 'gen-t');
    const results = parseBlock(readFileSync(file), 'proofloop');
    const packed = packResults(results);
    expect(packed.other).toHaveLength(0);
    const back = unpackResults(packed);
    expect(withoutPayloads(back)).toEqual(withoutPayloads(results));
    // A chained event's digest travels, so a hash that does not match its content is reported.
    expect(back.every((r) => r.t === 'ev' && r.digest !== null && r.digest.length === 64)).toBe(true);
  });

  it.each([1, 4096])(
    'packs line by line as a worker does (columns sized for %i at first) what packResults packs',
    (expect_) => {
      const buf = Buffer.concat(files.map(blockOf));
      const packer = new Packer(expect_);
      const seen: LineResult[] = [];
      eachLineResult(buf, null, (r) => {
        seen.push(r);
        packer.add(r);
      });
      const streamed = packer.finish();
      const whole = packResults(parseBlock(buf, null));
      expect(seen.length).toBe(whole.n);
      expect(streamed.n).toBe(whole.n);
      expect(streamed.strings).toEqual(whole.strings);
      expect([...streamed.cols]).toEqual([...whole.cols]);
      expect(withoutPayloads(unpackResults(structuredClone(streamed)))).toEqual(withoutPayloads(seen));
    },
  );

  it('a block that is not UTF-8 is parsed line by line, its bad lines found, in order', () => {
    const good = readFileSync(
      files.find((f) => f.includes('seed'))!,
      'utf8',
    ).split('\n')[0]!;
    const buf = Buffer.concat([
      Buffer.from(`${good}\n`),
      Buffer.from([0xff, 0xfe, 10]),
      Buffer.from(`${good}\n`),
    ]);
    const seen: LineResult[] = [];
    eachLineResult(buf, null, (r) => seen.push(r));
    expect(seen.map((r) => r.t)).toEqual(['ev', 'not_utf8', 'ev']);
    expect(parseBlock(buf, null).map((r) => r.t)).toEqual(['ev', 'not_utf8', 'ev']);
  });

  it('keeps null apart from empty strings in the optional fields, and repeats nothing it need not', () => {
    const ev = (seq: number, over: Partial<ParsedEvent>): ParsedEvent => ({
      t: 'ev',
      fmt: 'seed000',
      src: 'r',
      seq,
      kind: 'k',
      v: 1,
      at: '',
      payload: {},
      json: '{}',
      orig: null,
      digest: null,
      redacted: false,
      prev: null,
      hash: null,
      hashOk: true,
      invalid: null,
      rounded: null,
      source: null,
      ...over,
    });
    const results: LineResult[] = [
      ev(1, { invalid: '', rounded: ['9007199254740993'], source: '' }),
      ev(2, { invalid: 'bad', source: '{"line":2}', digest: 'a'.repeat(64), redacted: true }),
      { t: 'blank' },
      { t: 'multi', list: [ev(3, { kind: 'x', at: 't' }), ev(4, { src: 's', fmt: 'codex' })] },
      ev(5, { prev: 'b'.repeat(64), hash: 'c'.repeat(64), hashOk: false }),
      ev(6, { prev: 'c'.repeat(64), hash: 'd'.repeat(64) }),
    ];
    const packed = packResults(results);
    expect(packed.other).toEqual([[2, { t: 'blank' }]]);
    // seq 6's prev is seq 5's hash: not sent again; src, kind and fmt only where they change.
    expect(packed.strings.filter((x) => x === 'c'.repeat(64))).toHaveLength(1);
    expect(packed.strings.filter((x) => x === 'r')).toHaveLength(2); // seq 1, and seq 5 after seq 4's s
    expect(unpackResults(structuredClone(packed))).toEqual(
      results.map((r) =>
        r.t === 'ev'
          ? { ...r, payload: {} }
          : r.t === 'multi'
            ? { t: 'multi', list: r.list.map((p) => ({ ...p, payload: {} })) }
            : r,
      ),
    );
  });
});
