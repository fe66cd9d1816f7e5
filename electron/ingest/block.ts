import { parseLine, type Format, type Parsed, type ParsedMulti } from './parse';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One line of a block: parsed, blank (skipped, as the seed's reader does) or not UTF-8. */
export type LineResult = Parsed | ParsedMulti | { t: 'blank' } | { t: 'not_utf8'; message: string };

/**
 * Parses a block of complete lines (each ending in `\n`). The block is decoded at once; only a
 * block that is not valid UTF-8 is decoded again line by line to find the lines at fault.
 */
export function parseBlock(buf: Uint8Array, fmt: Format | null = null): LineResult[] {
  const out: LineResult[] = [];
  eachLineResult(buf, fmt, (r) => out.push(r));
  return out;
}

/**
 * parseBlock handing each line's result to `each` as soon as it is made, in line order, for a
 * caller that keeps only part of it (a parse worker packs it: see Packer in transfer.ts).
 */
export function eachLineResult(buf: Uint8Array, fmt: Format | null, each: (r: LineResult) => void): void {
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    eachLineByLine(buf, fmt, each);
    return;
  }
  let from = 0;
  const end = text.length;
  while (from < end) {
    let nl = text.indexOf('\n', from);
    if (nl === -1) nl = end;
    each(parseText(text.slice(from, nl), fmt));
    from = nl + 1;
  }
}

function parseText(line: string, fmt: Format | null): LineResult {
  // Blank lines (and a Windows \r) are no events; the seed's own reader skips them too.
  if (line.charCodeAt(0) !== 123 && line.trim() === '') return { t: 'blank' };
  return parseLine(line, fmt);
}

function eachLineByLine(buf: Uint8Array, fmt: Format | null, each: (r: LineResult) => void): void {
  let from = 0;
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  while (from < b.length) {
    let nl = b.indexOf(10, from);
    if (nl === -1) nl = b.length;
    const bytes = b.subarray(from, nl);
    let line: string | null = null;
    try {
      line = utf8.decode(bytes);
    } catch (e) {
      each({ t: 'not_utf8', message: `the line is not valid UTF-8 (${(e as Error).message})` });
    }
    if (line !== null) each(parseText(line, fmt));
    from = nl + 1;
  }
}
