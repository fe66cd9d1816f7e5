import { CURRENT_V, type NewEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import { canonicalPayload, checkKind } from './prepare';
import type { ChunkItems } from './chunk';

/**
 * What one append brings, whoever serialised it: the caller's items (serialised here), or items a
 * producer serialised already (RunWriter.appendSerialized: the OTLP receiver's decode thread).
 */
export interface AppendSource {
  readonly n: number;
  /** Each item's kind, in order (the checks under the write lock read nothing else). */
  readonly heads: readonly { kind: string }[];
  /** Items [from, to) as columns, payloads as canonical JSON; `ats` is stamped in the commit. */
  columns(from: number, to: number): ChunkItems;
  /** The item's own time, else undefined (the commit's clock reading). */
  at(i: number): string | undefined;
  /** The payloads' texts are their stored forms already (prepareItem): redacted and checked. */
  readonly finished: boolean;
  /** Nobody reads the events returned: they are not parsed back unless a listener wants them. */
  readonly unread: boolean;
}

export function itemsSource(items: readonly NewEvent[]): AppendSource {
  return {
    n: items.length,
    heads: items,
    columns(from, to) {
      const c: ChunkItems = { kinds: [], vs: [], ats: [], jsons: [] };
      for (let i = from; i < to; i++) {
        const it = items[i]!;
        c.kinds.push(it.kind);
        c.vs.push(it.v ?? CURRENT_V);
        c.jsons.push(canonicalPayload(it));
      }
      return c;
    },
    at: (i) => items[i]!.at,
    finished: false,
    unread: false,
  };
}

/**
 * Items serialised by their producer: each payload's canonical JSON as canonicalPayload (prepare.ts)
 * writes it, `at` null for the commit's clock. Redaction and the schema check are still done here,
 * on that text, as for every append.
 */
export interface SerializedItems {
  kinds: string[];
  vs: number[];
  ats: (string | null)[];
  jsons: string[];
  /**
   * The texts are what prepareItem (prepare.ts) gave: stored forms, redacted and checked already
   * where they were prepared, so they are not parsed, redacted and checked again here.
   */
  finished?: boolean;
}

export function serializedSource(s: SerializedItems, unread: boolean): AppendSource {
  const n = s.kinds.length;
  if (s.vs.length !== n || s.ats.length !== n || s.jsons.length !== n)
    throw new ProofloopError('bad_args', 'serialized items: kinds, vs, ats and jsons differ in length');
  const heads = s.kinds.map((kind, i) => {
    checkKind(kind);
    // Canonical JSON of an object starts with its brace; anything else is not an object payload.
    if (s.jsons[i]!.charCodeAt(0) !== 123)
      throw new ProofloopError('bad_args', `payload of ${kind} must be a JSON object`);
    return { kind };
  });
  return {
    n,
    heads,
    // finishItems replaces redacted texts in place: the caller's arrays stay as they were.
    columns: (from, to) => ({
      kinds: s.kinds.slice(from, to),
      vs: s.vs.slice(from, to),
      ats: [],
      jsons: s.jsons.slice(from, to),
    }),
    at: (i) => s.ats[i] ?? undefined,
    finished: s.finished === true,
    unread,
  };
}

/** Each item's own `at`, else the commit's one clock reading (toISOString measured ~1 µs an event). */
export function stamp(src: AppendSource, from: number, c: ChunkItems, now: string): void {
  for (let i = 0; i < c.kinds.length; i++) c.ats.push(src.at(from + i) ?? now);
}
