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

/**
 * Each item's digest (it needs the seq, not the chain), as one string of 64 hex digits per item
 * (one string crosses between threads as one copy; an array of them as one copy each).
 */
export function digestItems(runId: string, seq: number, c: ChunkItems): string {
  const out: string[] = new Array<string>(c.jsons.length);
  for (let i = 0; i < c.jsons.length; i++) {
    out[i] = digestEventCanonical(seq + i, runId, c.kinds[i]!, c.vs[i]!, c.ats[i]!, c.jsons[i]!);
  }
  return out.join('');
}

/** The chain over `digests` (as digestItems gives them) from `prev`: each hash, joined the same way. */
export function chainItems(prev: string, digests: string): string {
  const n = digests.length / 64;
  const out: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = prev = chainLink(prev, digests.slice(i * 64, i * 64 + 64), sha256Hex);
  return out.join('');
}

/** The items' mirror lines, joined, each ending in a newline; `hashes` as chainItems gives them. */
export function mirrorLines(runId: string, seq: number, prev: string, c: ChunkItems, hashes: string): string {
  const lines: string[] = new Array<string>(c.jsons.length);
  const runIdJson = JSON.stringify(runId);
  for (let i = 0; i < c.jsons.length; i++) {
    const hash = hashes.slice(i * 64, i * 64 + 64);
    lines[i] =
      jsonLineAround(seq + i, runIdJson, c.kinds[i]!, c.vs[i]!, c.ats[i]!, c.jsons[i]!, prev, hash) + '\n';
    prev = hash;
  }
  return lines.join('');
}
