import { StringDecoder } from 'node:string_decoder';
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
  const decoder = new StringDecoder('utf8');
  let tail = '';
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

  const take = (text: string): void => {
    const items: NewEvent[] = [];
    const lines: number[] = [];
    for (const raw of text.split('\n')) {
      lineNo += 1;
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '') continue;
      let item: NewEvent;
      try {
        item = itemOf(line);
      } catch (e) {
        append(items, lines);
        throw atLine(lineNo, e);
      }
      items.push(item);
      lines.push(lineNo);
    }
    append(items, lines);
  };

  for await (const chunk of input) {
    const text = tail + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    const end = text.lastIndexOf('\n');
    tail = end === -1 ? text : text.slice(end + 1);
    if (tail.length > maxLine) {
      if (end !== -1) take(text.slice(0, end));
      throw atLine(lineNo + 1, new Error(`a line of over ${maxLine} characters`));
    }
    if (end !== -1) take(text.slice(0, end));
  }
  tail += decoder.end();
  // The input ended: a last line without its newline is complete.
  if (tail.trim() !== '') take(tail);
  return appended;
}

function atLine(line: number, e: unknown): ProofloopError {
  return new ProofloopError('bad_args', `stdin line ${line}: ${(e as Error).message}`);
}

/** One line as an item to append; the ledger checks the kind's name and the payload itself. */
function itemOf(line: string): NewEvent {
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
