import { sha256Hex } from '../crypto';
import { dict } from '../../shared/dict';
import type { AttrValue, Attrs, OtlpLog, OtlpSpan } from './types';
import { BoundedMap } from '../bounded-map';

/** One event a record maps to; `at` is the record's own time. */
export interface MappedItem {
  kind: string;
  payload: Record<string, unknown>;
  at?: string;
  v?: number;
}

/**
 * What a run's mapping remembers between records, in memory for the live run: which inference
 * spans counted tokens (a wrapper span repeating them must not count them again) and the call
 * ids of harness decisions still waiting for their tool's result.
 */
export class RunMapState {
  /** parent span id → the child inference span that counted tokens under it. */
  readonly countedUnder = new Map<string, string>();
  /**
   * Inference span ids that counted tokens, and the parent span each one sits under. Bounded: a
   * long-lived run keeps the latest spans only (wrappers end soon after their children).
   */
  readonly counted = new BoundedMap<string, string | null>(20_000, (first, parent) => {
    if (parent && this.countedUnder.get(parent) === first) this.countedUnder.delete(parent);
  });
  /** tool name → call ids of decisions whose tool_result has not come yet (oldest first). */
  readonly pending = new Map<string, string[]>();
  decisions = 0;
  /** Call ids a tool_decision named (bounded): a refusal read from a result is not a second decision. */
  readonly decided = new BoundedMap<string, true>(20_000);

  noteCounted(spanId: string, parent: string | null): void {
    this.counted.set(spanId, parent);
    if (parent) this.countedUnder.set(parent, spanId);
  }
}

export interface SpanMapper {
  family: string;
  span(s: OtlpSpan, st: RunMapState): MappedItem[] | null;
}

export interface LogMapper {
  family: string;
  log(l: OtlpLog, st: RunMapState): MappedItem[] | null;
}

const NS_PER_MS = 1_000_000n;
const DIGITS = /^\d{1,20}$/;

/**
 * Unix nanoseconds (decimal string) as an ISO time, or undefined for 0 (unset: the ledger stamps it).
 * The milliseconds are the digits before the last six (at most 14 digits: exact in a double),
 * which BigInt division gave too at ~1 µs more a time (two times a span).
 */
export function isoOf(ns: string): string | undefined {
  if (ns === '0' || ns === '') return undefined;
  const ms = DIGITS.test(ns) ? (ns.length > 6 ? Number(ns.slice(0, -6)) : 0) : Number(BigInt(ns) / NS_PER_MS);
  if (!(ms <= MAX_DATE_MS)) return undefined;
  // A record's times, and a request's records, mostly fall in one second: its text is kept, and
  // only the milliseconds written (toISOString measured ~6% of the decode thread's time).
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastPrefix = new Date(second * 1000).toISOString().slice(0, -4); // without `000Z`
  }
  const m = ms - second * 1000;
  return `${lastPrefix}${m < 10 ? '00' : m < 100 ? '0' : ''}${m}Z`;
}

/** The latest time a Date holds (ECMAScript: 8.64e15 ms after the epoch). */
const MAX_DATE_MS = 8.64e15;
let lastSecond = NaN;
let lastPrefix = '';

/** Whole seconds and the nanoseconds after them, as numbers (each exact in a double). */
function split(ns: string): [number, number] {
  return [ns.length > 9 ? Number(ns.slice(0, -9)) : 0, Number(ns.length > 9 ? ns.slice(-9) : ns)];
}

export function durationMs(startNs: string, endNs: string): number {
  let d: number;
  if (DIGITS.test(startNs) && DIGITS.test(endNs)) {
    const [s0, n0] = split(startNs);
    const [s1, n1] = split(endNs);
    // Exact while the difference stays under 2^53 ns (104 days); past a day, BigInt as before.
    d =
      Math.abs(s1 - s0) < 86_400
        ? ((s1 - s0) * 1e9 + (n1 - n0)) / 1e6
        : Number(BigInt(endNs) - BigInt(startNs)) / 1e6;
  } else d = Number(BigInt(endNs) - BigInt(startNs)) / 1e6;
  return d > 0 && Number.isFinite(d) ? Math.round(d * 1000) / 1000 : 0;
}

export const str = (a: Attrs, k: string): string | undefined => {
  const v = a[k];
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
};

export const int = (a: Attrs, k: string): number | undefined => {
  const v = a[k];
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
};

export function first(a: Attrs, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = str(a, k);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** A JSON text as its value, anything else as it is (GenAI attributes carry JSON in strings). */
export function parsed(v: AttrValue | undefined): unknown {
  if (typeof v !== 'string') return v ?? null;
  const t = v.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return v;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return v;
  }
}

const EXCERPT = 4096;

/** A tool result as tool_returned keeps it: a bounded excerpt, the digest and size of the whole. */
export function resultFields(v: unknown): { excerpt?: string; digest?: string; bytes?: number } {
  if (v === undefined || v === null) return {};
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  const bytes = Buffer.byteLength(text);
  return {
    excerpt: text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text,
    digest: sha256Hex(text),
    bytes,
  };
}

/** A name as a ProofLoop kind (KIND_RE: snake_case, at most 64 characters). */
export function kindName(name: string, fallback: string): string {
  const k = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return /^[a-z]/.test(k) ? k : fallback;
}

export const isError = (s: OtlpSpan): boolean => s.status.code === 2;

/**
 * Dotted, indexed attributes (OpenInference's `llm.output_messages.0.message.content`, OpenLLMetry's
 * `gen_ai.completion.0.content`) under `prefix` as a list of flat records: [{ 'message.content': … }].
 */
export function indexed(a: Attrs, prefix: string): Record<string, AttrValue>[] {
  const out: Record<string, AttrValue>[] = [];
  const p = `${prefix}.`;
  for (const [k, v] of Object.entries(a)) {
    if (!k.startsWith(p)) continue;
    const rest = k.slice(p.length);
    const dot = rest.indexOf('.');
    const i = Number(dot < 0 ? rest : rest.slice(0, dot));
    if (!Number.isInteger(i) || i < 0 || i >= 1024) continue;
    // An attribute named `…0.__proto__` is a key like any other.
    (out[i] ??= dict())[dot < 0 ? '' : rest.slice(dot + 1)] = v;
  }
  return out.filter(Boolean);
}

/**
 * A tool span as its two events: invoked at the span's start with its arguments, returned at its end
 * with status, duration and a bounded excerpt of the result (GenAI `execute_tool`, OpenInference TOOL).
 */
export function toolSpanItems(
  s: OtlpSpan,
  call: { callId: string; tool: string; args: unknown; result: unknown; error: string | undefined },
  invokedExtra: Record<string, unknown> = {},
): MappedItem[] {
  const { callId, tool, error } = call;
  return [
    {
      kind: 'tool_invoked',
      at: isoOf(s.startNs),
      payload: { call_id: callId, tool, args: call.args, ...invokedExtra },
    },
    {
      kind: 'tool_returned',
      at: isoOf(s.endNs) ?? isoOf(s.startNs),
      payload: {
        call_id: callId,
        tool,
        status: error === undefined ? 'ok' : 'error',
        duration_ms: durationMs(s.startNs, s.endNs),
        ...resultFields(call.result),
        ...(error !== undefined ? { error } : {}),
      },
    },
  ];
}
