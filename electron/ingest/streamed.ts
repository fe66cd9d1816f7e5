import { statSync } from 'node:fs';
import type { LineResult } from './block';
import { formatNamed } from './formats/registry';
import type { ReadOptions } from './lines';
import { excerptOf, parseMapped, type ParsedEvent } from './parse';
import type { ParsedBlock } from './source';

/** Records a block holds at most: a commit (CHUNK rows) waits for no more than a block. */
const BLOCK_RECORDS = 500;
/** A block also ends after this long, so a record of MBs does not hold the first rows back. */
const BLOCK_MS = 100;

/**
 * The parsing source (as parsedBlocks is for JSON lines) of a streamed format's file (an eval log:
 * FormatAdapter.streamed): its reader's records, each parsed as a line is (parseMapped), in blocks.
 * Such a file has no byte offset to go
 * on from, so every block but the last ends where the read started (the importer's stored offset
 * stays there) and the last ends at the file's size; the records already imported
 * (`opts.afterRecord`, the stored line count) are read again and skipped, never imported twice.
 */
export async function* streamedBlocks(
  file: string,
  start: number,
  opts: ReadOptions,
): AsyncGenerator<ParsedBlock> {
  const fmt = opts.fmt ?? null;
  const reader = fmt === null ? undefined : formatNamed(fmt)?.streamed;
  if (!reader) throw new Error(`${fmt ?? 'no format'} has no document reader`);
  const end = opts.until ?? statSync(file).size;
  let skip = opts.afterRecord ?? 0;
  let results: LineResult[] = [];
  let since = performance.now();
  for await (const r of reader.records(file)) {
    if (skip > 0) {
      skip -= 1;
      continue;
    }
    results.push(
      'error' in r
        ? {
            t: 'bad',
            code: 'invalid_event',
            message: `${r.where}: ${r.error}`,
            seq: null,
            src: null,
            excerpt: excerptOf(r.where),
          }
        : withRunMeta(parseMapped(fmt!, fmt!, r.events, {}, r.where), r.events),
    );
    // Timed from the block's first record: a record that took long to read (a sample entry of tens
    // of MB) joins the records before it, so the first commit already holds a sample's first rows.
    if (results.length === 1) since = performance.now();
    else if (results.length >= BLOCK_RECORDS || performance.now() - since >= BLOCK_MS) {
      yield { t: 'lines', start, end: start, lines: results.length, results };
      results = [];
      since = performance.now();
    }
  }
  yield { t: 'lines', start, end, lines: results.length, results };
}

/** The run facts of the events that begin runs (MappedEvent.runMeta), onto their parsed events. */
function withRunMeta(r: LineResult, events: readonly { runMeta?: Record<string, unknown> }[]): LineResult {
  const list = r.t === 'multi' ? r.list : [r];
  list.forEach((p, i) => {
    const meta = events[i]?.runMeta;
    if (meta && p.t === 'ev') (p as ParsedEvent).runMeta = meta;
  });
  return r;
}
