import type { LineResult } from './block';
import { parseLine, type Format } from './parse';

/**
 * What a file's last line says when it is not a line yet: no newline after it (whole, or still
 * being written), or cut past the line bound. The import and `verify` of a source file read it
 * alike: a whole one counts, a cut one names the seq it was at.
 */

/** The seq a cut last line names near its start, if any (the line itself does not parse). */
export function tailSeq(buf: Buffer | null): number | null {
  if (!buf) return null;
  const m = /"seq"\s*:\s*(\d{1,15})/.exec(buf.subarray(0, 4096).toString('utf8'));
  return m ? Number(m[1]) : null;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A last line without its newline, when it is whole: it parses and every event it makes is valid. */
export function completeLine(buf: Buffer, fmt: Format | null): LineResult | null {
  let text: string;
  try {
    text = strictUtf8.decode(buf);
  } catch {
    return null;
  }
  const r = parseLine(text, fmt);
  const list = r.t === 'multi' ? r.list : [r];
  return list.every((p) => p.t === 'ev' && p.invalid === null) ? r : null;
}
