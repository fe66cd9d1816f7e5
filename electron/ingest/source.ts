import { parseBlock, type LineResult } from './block';
import { readBlocks, type Block, type ReadOptions } from './lines';

/** A block of the file with its lines parsed (parsing needs no order, so it may run in a worker). */
export type ParsedBlock =
  | { t: 'lines'; start: number; end: number; lines: number; results: LineResult[] }
  | Exclude<Block, { t: 'lines' }>;

/** Reads and parses in this thread. */
export async function* parsedBlocks(
  file: string,
  start: number,
  opts: ReadOptions,
): AsyncGenerator<ParsedBlock> {
  for await (const b of readBlocks(file, start, opts)) {
    if (b.t === 'lines')
      yield {
        t: 'lines',
        start: b.start,
        end: b.end,
        lines: b.lines,
        results: parseBlock(b.buf, opts.fmt ?? null),
      };
    else yield b;
  }
}
