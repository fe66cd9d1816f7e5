import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ZERO_HASH, toJsonLine, type LedgerEvent } from '../../shared/protocol';
import { digestEvent, linkHash } from '../../electron/crypto';
import {
  parseLine,
  roundedIntegers,
  scanRoundedIntegers,
  type ParsedEvent,
} from '../../electron/ingest/parse';

/** The scan as it was before its pre-check looked only where a number can start (the reference). */
const roundedReference = (text: string): string[] | null =>
  /\d{16}/.test(text) ? scanRoundedIntegers(text) : null;

/** A valid chained line of ProofLoop's format, with `extra` members in its envelope. */
function chainedLine(payload: Record<string, unknown>, extra = ''): string {
  const at = '2026-01-01T00:00:00.000Z';
  const digest = digestEvent(1, 'r', 'context_updated', 1, at, payload);
  const e: LedgerEvent = {
    seq: 1,
    run_id: 'r',
    kind: 'context_updated',
    v: 1,
    at,
    payload,
    prev: ZERO_HASH,
    hash: linkHash(ZERO_HASH, digest),
  };
  const line = toJsonLine(e);
  return extra === '' ? line : `${line.slice(0, -1)},${extra}}`;
}

describe('integers a double cannot hold (parse.ts)', () => {
  it('finds them wherever a number can stand, whitespace included, and nowhere in strings', () => {
    expect(roundedIntegers('{"a":9007199254740993}')).toEqual(['9007199254740993']);
    expect(roundedIntegers('{"a": \t\n-9007199254740993}')).toEqual(['-9007199254740993']);
    expect(roundedIntegers('{"a":[1, 12345678901234567890]}')).toEqual(['12345678901234567890']);
    expect(roundedIntegers('{"a":[9007199254740991]}')).toBeNull(); // Number.MAX_SAFE_INTEGER
    expect(roundedIntegers(`{"h":"${'0'.repeat(63)}1","s":":12345678901234567890"}`)).toBeNull();
    expect(roundedIntegers('{"a":1.2345678901234567890}')).toBeNull();
  });

  it('agrees with the full scan on random JSON holding long integers', () => {
    const big = fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map((b) => ({ big: b.toString() }));
    const value = fc.jsonValue({ maxDepth: 3 });
    const ws = fc.constantFrom('', ' ', '\n', '\t ');
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), fc.oneof(value, big), ws), { maxLength: 6 }), (members) => {
        const text =
          '{' +
          members
            .map(([k, v, w], i) => {
              const json =
                typeof v === 'object' && v !== null && 'big' in v && typeof v.big === 'string'
                  ? v.big
                  : JSON.stringify(v);
              return `${JSON.stringify(`${k}${i}`)}:${w}${json}`;
            })
            .join(`,`) +
          '}';
        JSON.parse(text); // the precondition: text that parsed
        expect(roundedIntegers(text)).toEqual(roundedReference(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('a valid chained line reports them as any other line does, hex digests aside', () => {
    const hex = { op: 'set', digest: '0'.repeat(48) + '1234567890abcdef' };
    const plain = parseLine(chainedLine(hex)) as ParsedEvent;
    expect(plain.t).toBe('ev');
    expect(plain.hashOk).toBe(true);
    expect(plain.rounded).toBeNull();
    // The payload's number as JS rounds it (2^64): its line says what the file holds.
    const inPayload = parseLine(chainedLine({ op: 'set', n: 2 ** 64 }));
    expect((inPayload as ParsedEvent).rounded).toEqual(['18446744073709552000']);
    const written = chainedLine(hex).replace('"op":"set"', '"n":9007199254740993,"op":"set"');
    expect((parseLine(written) as ParsedEvent).rounded).toEqual(['9007199254740993']);
    // A member of the envelope outside the payload counts too (the general path's rule), whatever
    // the payload holds (before, only when its text had a run of 16 digits, such as a hex digest).
    const outside = parseLine(chainedLine({ op: 'set' }, '"x":9007199254740993')) as ParsedEvent;
    expect(outside.hashOk).toBe(true);
    expect(outside.rounded).toEqual(['9007199254740993']);
    // 10^21 as the file writes it, which canonical JSON writes 1e+21: the payload's exponent.
    const huge = chainedLine({ op: 'set', n: 1e21 }).replace('1e+21', '1' + '0'.repeat(21));
    expect((parseLine(huge) as ParsedEvent).hashOk).toBe(true);
    expect((parseLine(huge) as ParsedEvent).rounded).toEqual(['1' + '0'.repeat(21)]);
    // A carried digest is a member of the envelope, not one beyond it.
    const carried = chainedLine(hex).replace('"hash"', `"digest":"${'e'.repeat(64)}","hash"`);
    const withDigest = parseLine(carried) as ParsedEvent;
    expect(withDigest.digest).toBe('e'.repeat(64));
    expect(withDigest.rounded).toBeNull();
    const both = carried.replace('"hash"', '"y":[1, 90071992547409930],"hash"');
    expect((parseLine(both) as ParsedEvent).rounded).toEqual(['90071992547409930']);
  });
});
