import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestEventCanonical, digestEventCanonicalBytes } from '../../electron/crypto';
import { canonicalJson } from '../../shared/protocol';

describe('digestEventCanonicalBytes', () => {
  it("is digestEventCanonical's digest, the payload given as its UTF-8 bytes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 9 }),
        fc.string({ unit: 'binary', maxLength: 30 }),
        fc.jsonValue(),
        (seq, runId, kind, v, at, payload) => {
          const text = canonicalJson(payload);
          expect(digestEventCanonicalBytes(seq, runId, kind, v, at, Buffer.from(text, 'utf8'))).toBe(
            digestEventCanonical(seq, runId, kind, v, at, text),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('hashes a payload of MBs, not only short ones', () => {
    const text = canonicalJson({ data: 'é'.repeat(3 << 20), n: [1, 2.5, null] });
    const at = '2026-02-10T09:00:00.000Z';
    expect(digestEventCanonicalBytes(7, 'run:1', 'tool_returned', 1, at, Buffer.from(text))).toBe(
      digestEventCanonical(7, 'run:1', 'tool_returned', 1, at, text),
    );
  });
});
