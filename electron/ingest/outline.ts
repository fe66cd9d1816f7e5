import type { LineResult } from './block';
import type { ParsedEvent } from './parse';
import type { MovedValue } from '../../shared/formats/source-ref';
import { canonicalJson } from '../../shared/protocol';
import { storeArtifact } from '../ledger/artifact-store';

/**
 * Large string values of imported events, stored as artifacts (issue 13, Build 6). A Claude Code
 * line of several MB (a pasted screenshot's base64, a huge tool output) would otherwise put MBs
 * into one event row, which every page read, search and export then carries. Each string value
 * longer than ARTIFACT_MIN_CHARS is stored once, content-addressed, by the `store` the importer
 * passes (beside the ledger: ledger/artifacts.ts, importArtifactsHome); the stored payload keeps its first
 * EXCERPT_BYTES and a note naming the artifact, and the event's source lists every value so
 * moved (`source.artifacts`: its JSON path, digest and size) so what was replaced is never in
 * doubt and the whole value can be read back (`artifact.read`, `proofloop artifact`).
 *
 * The value stored is the redacted one: parsing redacts the payload before this runs. The event
 * keeps the digest of what the file said, as a redacted event does, so its seal still covers the
 * line as written. ProofLoop's own chained lines are left as they are (their chain is the source's,
 * and the ledger bounds the payloads it appends itself).
 */
export const ARTIFACT_MIN_CHARS = 64 << 10;
/** What the event keeps of a moved value. */
export const EXCERPT_BYTES = 2048;

/** Stores (redacted) text as an artifact: its digest and size in bytes as stored, and that text. */
export type StoreArtifact = (text: string) => { digest: string; bytes: number; text: string };

type Path = (string | number)[];

/** The first `max` bytes of `text` in UTF-8, cut on a character boundary. */
export function utf8Prefix(text: string, max: number): string {
  const buf = Buffer.from(text.slice(0, max), 'utf8');
  if (buf.length <= max) return text.slice(0, max);
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end -= 1;
  return buf.subarray(0, end).toString('utf8');
}

/** The excerpt a moved value leaves in the payload: a prefix, then a note that says where the rest is. */
export function excerptNote(text: string, digest: string, bytes: number): string {
  return `${utf8Prefix(text, EXCERPT_BYTES)}…[${bytes} bytes in all: moved to artifact sha256:${digest}]`;
}

function outlineValue(v: unknown, path: Path, store: StoreArtifact, moved: MovedValue[]): unknown {
  if (typeof v === 'string') {
    if (v.length <= ARTIFACT_MIN_CHARS) return v;
    const a = store(v);
    moved.push({ path: [...path], digest: a.digest, bytes: a.bytes });
    return excerptNote(a.text, a.digest, a.bytes);
  }
  if (typeof v !== 'object' || v === null) return v;
  // Copied only along the paths that change: the rest of the payload is shared, not cloned.
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      const n = outlineValue(v[i], path, store, moved);
      path.pop();
      if (n !== v[i]) (out ??= v.slice())[i] = n;
    }
    return out ?? v;
  }
  let out: Record<string, unknown> | null = null;
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    path.push(k);
    const n = outlineValue(o[k], path, store, moved);
    path.pop();
    if (n !== o[k]) (out ??= { ...o })[k] = n;
  }
  return out ?? v;
}

/** Moves the large values of one event to artifacts; returns whether it moved any. */
export function outlineEvent(p: ParsedEvent, store: StoreArtifact): boolean {
  // The canonical JSON is at least as long as any string in it: most events stop here.
  if (p.fmt === 'proofloop' || p.json.length <= ARTIFACT_MIN_CHARS) return false;
  const moved: MovedValue[] = [];
  const payload = outlineValue(p.payload, [], store, moved) as Record<string, unknown>;
  if (moved.length === 0) return false;
  // The digest covers what the file said: the sequencer digests it when it has no digest yet. An
  // unredacted payload's stored text is its canonical JSON: kept as its bytes, which the digest
  // hashes as they are (not the object serialised again), and which leave a worker without a copy
  // and outside the main thread's heap (MBs, for these events: that heap's garbage was most of a
  // big session's peak RSS).
  if (p.orig === null && !p.redacted) p.origUtf8 = Buffer.from(p.json, 'utf8');
  else p.orig ??= p.payload;
  p.payload = payload;
  p.json = canonicalJson(payload);
  // Stored with its original digest beside it, as a redacted payload is (the ledger's rule).
  p.redacted = true;
  const source = p.source === null ? {} : (JSON.parse(p.source) as Record<string, unknown>);
  p.source = JSON.stringify({ ...source, artifacts: moved });
  return true;
}

/** outlineEvent over a block's results (a line may have made several events). */
export function outlineResults(results: readonly LineResult[], store: StoreArtifact): void {
  for (const r of results) outlineResult(r, store);
}

/** outlineEvent over one line's result. */
export function outlineResult(r: LineResult, store: StoreArtifact): void {
  if (r.t === 'ev') outlineEvent(r, store);
  else if (r.t === 'multi') for (const p of r.list) if (p.t === 'ev') outlineEvent(p, store);
}

/**
 * The importer's StoreArtifact: the values it moves come from payloads the parser has redacted
 * already (parse.ts), so the store does not run the redactor over their MBs a second time.
 */
export function storeRedacted(home: string): StoreArtifact {
  return (text) => storeArtifact(home, text, { redacted: true });
}
