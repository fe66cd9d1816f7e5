import type { NewEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import type { RunWriter, StoredEvent } from '../ledger';
import { DEFAULT_MAX_LINE } from '../ingest/lines';

/**
 * `proofloop append <run> --stdin`: events as JSON lines, `{"kind", "payload"[, "v"][, "at"]}`, appended
 * to one run as they arrive, by one writer held for the whole stream. An agent in any language keeps
 * one process open and writes a line per event, instead of starting a process per event.
 *
 * The complete lines that one read delivers are one transaction: an agent writing a line at a time
 * gets each event committed (durable) before it writes the next, and a file piped in goes in batches.
 * A bad line stops the stream: every line before it is appended, nothing after, and the error names
 * the line.
 */
export async function appendLines(
  writer: RunWriter,
  input: AsyncIterable<Buffer | string>,
  onAppended: (events: readonly StoredEvent[]) => void,
  maxLine = DEFAULT_MAX_LINE,
): Promise<number> {
  let tail: Buffer = Buffer.alloc(0);
  let lineNo = 0;
  let appended = 0;

  const append = (items: NewEvent[], lines: number[]): void => {
    if (items.length === 0) return;
    let events: StoredEvent[];
    try {
      events = writer.appendBatch(items);
    } catch (e) {
      if (!(e instanceof ProofloopError) || e.code !== 'bad_args') throw e;
      // Which line? One at a time up to it: those before it are appended, as promised.
      for (let i = 0; i < items.length; i++) {
        try {
          const one = writer.appendBatch([items[i]!]);
          appended += 1;
          onAppended(one);
        } catch (e1) {
          throw atLine(lines[i]!, e1);
        }
      }
      return;
    }
    appended += events.length;
    onAppended(events);
  };

  /** Complete lines (the bytes hold no final newline); each is decoded alone, so a bad one is named. */
  const take = (bytes: Buffer): void => {
    const items: NewEvent[] = [];
    const lines: number[] = [];
    for (let from = 0; from <= bytes.length;) {
      let nl = bytes.indexOf(10, from);
      if (nl === -1) nl = bytes.length;
      lineNo += 1;
      let item: NewEvent | null;
      try {
        item = itemOf(decode(bytes.subarray(from, nl)));
      } catch (e) {
        append(items, lines);
        throw atLine(lineNo, e);
      }
      if (item) {
        items.push(item);
        lines.push(lineNo);
      }
      from = nl + 1;
    }
    append(items, lines);
  };

  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const buf = tail.length > 0 ? Buffer.concat([tail, bytes]) : bytes;
    const end = buf.lastIndexOf(10);
    tail = end === -1 ? buf : buf.subarray(end + 1);
    if (end !== -1) take(buf.subarray(0, end));
    if (tail.length > maxLine) throw atLine(lineNo + 1, new Error(`a line of over ${maxLine} bytes`));
  }
  // The input ended: a last line without its newline is complete.
  if (tail.length > 0) take(tail);
  return appended;
}

function atLine(line: number, e: unknown): ProofloopError {
  return new ProofloopError('bad_args', `stdin line ${line}: ${(e as Error).message}`);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A line's text; bytes that are not UTF-8 are refused, not replaced. */
function decode(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new Error('not valid UTF-8');
  }
}

/**
 * One line as an item to append, or null for a blank line; the ledger checks the kind's name and
 * the payload itself.
 */
function itemOf(text: string): NewEvent | null {
  const line = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (line.trim() === '') return null;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch (e) {
    throw new Error(`not JSON: ${(e as Error).message}`);
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) {
    throw new Error('a line must be an object {"kind", "payload"[, "v"][, "at"]}');
  }
  const { kind, payload, v, at, ...rest } = o as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw new Error(`unknown field "${extra[0]}": a line has kind, payload, v and at`);
  if (typeof kind !== 'string') throw new Error('kind must be a string');
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new Error(`payload of ${kind} must be a JSON object`);
  }
  if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v > 0)) {
    throw new Error('v must be a positive integer');
  }
  if (at !== undefined && (typeof at !== 'string' || at === ''))
    throw new Error('at must be a non-empty string');
  const item: NewEvent = { kind, payload: payload as Record<string, unknown> };
  if (v !== undefined) item.v = v;
  if (at !== undefined) item.at = at;
  return item;
}
