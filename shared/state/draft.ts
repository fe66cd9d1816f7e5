import {
  STATE_CAPS,
  type CallRecord,
  type Capped,
  type ContextEntry,
  type FoldEvent,
  type Note,
  type NoteCode,
  type RunState,
} from './types';

/**
 * The fold's small pure helpers. Defensive: imported events may be invalid, and the fold never
 * throws.
 */

export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** An own property only: a kind named `constructor` must not find Object.prototype.constructor. */
export const own = (o: Record<string, number>, k: string): number =>
  Object.prototype.hasOwnProperty.call(o, k) ? (o[k] ?? 0) : 0;

export function clip(s: string, max: number = STATE_CAPS.text): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}

export function clipOrNull(v: unknown): string | null {
  const s = str(v);
  return s === null ? null : clip(s);
}

/** Args as proposed when small, else a bounded excerpt of their JSON. */
export function boundedArgs(args: unknown, json: string): unknown {
  if (args === undefined || json === '') return null;
  return json.length <= STATE_CAPS.text ? args : { excerpt: clip(json), chars: json.length };
}

/** A copy of a capped list with `item` appended, dropping the oldest beyond `cap`. */
export function push<T, L extends Capped<T>>(list: L, item: T, cap: number): L {
  const items = list.items.length >= cap ? list.items.slice(list.items.length - cap + 1) : list.items.slice();
  items.push(item);
  const total = list.total + 1;
  return { ...list, items, total, dropped: total - items.length };
}

/*
 * Important: the helpers below take `s`, the fresh top-level copy that evolve made for this event,
 * and assign its fields. They never write into an object reachable from the input state: every
 * nested object they change is replaced by a new one (so unchanged parts stay shared).
 */
export type Draft = RunState;

export function note(s: Draft, e: FoldEvent, code: NoteCode, message: string): void {
  const n: Note = { seq: e.seq, kind: e.kind, code, message };
  s.notes = push(s.notes, n, STATE_CAPS.notes);
}

/** Index of the call in the kept window, newest first (the calls an event names are usually recent). */
export function findCall(s: RunState, callId: string): number {
  const items = s.calls.items;
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.call_id === callId) return i;
  return -1;
}

export function isOpen(c: CallRecord): boolean {
  return c.status !== 'denied' && c.status !== 'returned' && c.status !== 'timed_out';
}

export function replaceCall(s: Draft, i: number, next: CallRecord): void {
  const prev = s.calls.items[i]!;
  const items = s.calls.items.slice();
  items[i] = next;
  const open = s.calls.open + (isOpen(next) ? 1 : 0) - (isOpen(prev) ? 1 : 0);
  s.calls = { ...s.calls, items, open };
}

export function addContext(s: Draft, entry: ContextEntry): void {
  s.context = push(s.context, entry, STATE_CAPS.context);
}

export function addError(s: Draft, e: FoldEvent, callId: string | null, message: string): void {
  s.errors = push(
    s.errors,
    { seq: e.seq, kind: e.kind, call_id: callId, message: clip(message) },
    STATE_CAPS.errors,
  );
}

/**
 * Looks up the call an event names; when it is not in the window, notes it and returns -1.
 * With calls dropped from the window, "never proposed" cannot be told from "proposed long ago".
 */
export function callFor(s: Draft, e: FoldEvent, callId: string): number {
  const i = findCall(s, callId);
  if (i >= 0) return i;
  const msg =
    s.calls.dropped > 0
      ? `call ${callId} is not among the ${s.calls.items.length} most recent calls: never proposed, or proposed before them`
      : `call ${callId} was never proposed`;
  note(s, e, 'unknown_call', msg);
  return -1;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return '';
  }
}
