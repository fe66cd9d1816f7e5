import { chainLink, jsonLineAround } from '../../shared/protocol';
import { digestEventCanonical, sha256Hex } from '../crypto';
import { finishPayload } from './prepare';

/**
 * A run of consecutive items of one append, as columns: what the ledger's thread hands the append
 * helper (append-helper.ts) and what it works on itself for a batch too small to hand over.
 */
export interface ChunkItems {
  kinds: string[];
  vs: number[];
  /** Each item's `at`: its own, else the commit's clock reading. */
  ats: string[];
  /** Each payload's canonical JSON; finishItems replaces a redacted one by its stored text. */
  jsons: string[];
}

/**
 * Redaction and the schema check of every item (see prepare.ts). Returns the indexes whose stored
 * text differs from the canonical text they came with, and keeps the parsed payloads in `payloads`
 * when given one. Throws the first item's ProofloopError, as the whole append fails on one bad item.
 */
export function finishItems(c: ChunkItems, payloads?: Record<string, unknown>[]): number[] {
  const redacted: number[] = [];
  for (let i = 0; i < c.jsons.length; i++) {
    const r = finishPayload(c.kinds[i]!, c.vs[i]!, c.jsons[i]!);
    if (r.json !== c.jsons[i]) {
      c.jsons[i] = r.json;
      redacted.push(i);
    }
    payloads?.push(r.payload);
  }
  return redacted;
}

/** A chunk chained: each item's hash (64 hex digits each, joined) and its mirror lines, joined ('' without). */
export interface LinkedChunk {
  hashes: string;
  lines: string;
}

/**
 * Digests the items of one run from `seq` and chains them from `prev`; the mirror lines are built
 * here too, as they carry each hash and the one before it. Hashes travel as one string: one copy
 * between threads, where an array of them is one copy each. `withLines` false: a run without a
 * mirror (the OTLP receiver's), whose lines nobody writes: building them measured 5-6 µs of
 * 11.5-12.3 µs an event here (the payloads bench/otlp.ts stores, 0.4-1 KB).
 */
export function linkChunk(
  runId: string,
  seq: number,
  prev: string,
  c: ChunkItems,
  withLines = true,
): LinkedChunk {
  const n = c.jsons.length;
  const hashes: string[] = new Array<string>(n);
  const lines: string[] = new Array<string>(n);
  const runIdJson = JSON.stringify(runId);
  for (let i = 0; i < n; i++) {
    const s = seq + i;
    const digest = digestEventCanonical(s, runId, c.kinds[i]!, c.vs[i]!, c.ats[i]!, c.jsons[i]!);
    const hash = chainLink(prev, digest, sha256Hex);
    hashes[i] = hash;
    if (withLines)
      lines[i] =
        jsonLineAround(s, runIdJson, c.kinds[i]!, c.vs[i]!, c.ats[i]!, c.jsons[i]!, prev, hash) + '\n';
    prev = hash;
  }
  return { hashes: hashes.join(''), lines: withLines ? lines.join('') : '' };
}
