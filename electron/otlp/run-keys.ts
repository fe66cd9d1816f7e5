import { prepareItem } from '../ledger/prepare';
import { CURRENT_V } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import type { Attrs, OtlpLog, OtlpMetric, OtlpSpan } from './types';
import { RunMapState } from './map-util';
import { mapLog, mapMetric, mapSpan } from './mapping';
import { BoundedMap } from '../bounded-map';

/**
 * Which run each record joins, as a key, and its events mapped, serialised, redacted and checked:
 * everything the receiver does to a request that needs no ledger. It runs in the decode thread
 * (decode-worker.ts), in the order bodies arrive, so that the receiver's thread (runs.ts) only
 * opens runs, chains and commits.
 *
 * Records are mapped whether or not their run can then be opened or appended to: a refused
 * record has moved its key's mapping state (tokens counted, decisions waiting), as a record whose
 * append failed did when this ran in the receiver's thread.
 *
 * A run per conversation (`gen_ai.conversation.id`, `session.id` — Claude Code's —,
 * `conversation.id` and `thread_id` — Codex's —, on the record or its resource), else per trace. A trace that named
 * its conversation once keeps joining it, so a child span without the id lands beside its parent,
 * late or out of order.
 */

const CONVERSATION_KEYS = [
  'gen_ai.conversation.id',
  'session.id',
  'conversation.id',
  'gen_ai.session.id',
  // Codex 0.169's spans of a thread (its conversation): `thread.id` there is the OS thread's.
  'thread_id',
];

/**
 * Codex exports its process's own spans (auth, config reads, startup) as traces of their own, with
 * no id of the thread they serve; an `exec` process serves one thread and exports its own requests.
 * So a Codex request's records that name no conversation, of traces that named none, join the one
 * conversation the rest of that request names (none or several: they keep their trace's run).
 */
const joinsRequestConversation = (resource: Attrs): boolean => {
  const service = resource['service.name'];
  return typeof service === 'string' && service.startsWith('codex');
};

export type RecordOf =
  { kind: 'span'; r: OtlpSpan } | { kind: 'log'; r: OtlpLog } | { kind: 'metric'; r: OtlpMetric };

/** What the receiver's thread needs to create a key's run: from the key's first record. */
export interface RunSeed {
  traceId: string | null;
  service: string | null;
}

/**
 * One request's records of one run key, in arrival order: their events as the ledger stores them
 * (prepareItem: canonical JSON, redacted and checked, which RunWriter.appendSerialized takes as
 * they are: `finished`), or why they could not be mapped or prepared (they are refused, alone).
 */
export interface PreparedPart {
  key: string;
  seed: RunSeed;
  records: number;
  kinds: string[];
  vs: number[];
  ats: (string | null)[];
  jsons: string[];
  finished: true;
  error?: { code: string | null; message: string };
}

function conversationOf(a: Attrs, resource: Attrs): string | undefined {
  for (const src of [a, resource]) {
    for (const k of CONVERSATION_KEYS) {
      const v = src[k];
      if ((typeof v === 'string' && v !== '') || typeof v === 'number') return String(v);
    }
  }
  return undefined;
}

/** Trace and conversation maps forget their oldest entry past this many (a receiver may run for weeks). */
const KEYS_MAX = 50_000;

interface KeyState {
  map: RunMapState;
  /** The resource last written into this key's events (an event repeats it only when it changes). */
  resource: Attrs | null;
  resourceJson: string;
}

export class RunKeys {
  /** trace id → the conversation it named (bounded: oldest forgotten first). */
  private readonly traceConversation = new BoundedMap<string, string>(KEYS_MAX);
  /** trace id and conversation id → the key of the run they joined (bounded likewise). */
  private readonly traceHome = new BoundedMap<string, string>(KEYS_MAX);
  private readonly convHome = new BoundedMap<string, string>(KEYS_MAX);
  /** Mapping state per run key; it outlives an idle writer (a decision's result may come later). */
  private readonly states = new BoundedMap<string, KeyState>(10_000);

  /** A new ledger (the app switched folders): its runs start from nothing. */
  reset(): void {
    this.states.clear();
    this.traceHome.clear();
    this.convHome.clear();
  }

  /** The key's run let its writer go: its next event carries the resource again. */
  released(key: string): void {
    const s = this.states.get(key);
    if (s) {
      s.resource = null;
      s.resourceJson = '';
    }
  }

  /**
   * A request's records keyed, mapped and serialised, one part per run key in order of first
   * appearance. First the conversations the request names, so a child span in the same request as
   * its parent joins the parent's conversation whichever comes first.
   */
  prepare(records: readonly RecordOf[]): PreparedPart[] {
    // The one conversation this request names (null: several).
    let only: string | null | undefined;
    for (const rec of records) {
      const trace = rec.r.traceId;
      const conv = conversationOf(rec.r.attributes, rec.r.resource);
      if (trace && conv) this.rememberTrace(trace, conv);
      if (conv) only = only === undefined || only === conv ? conv : null;
    }
    const byKey = new Map<string, RecordOf[]>();
    for (const rec of records) {
      const key = this.keyOf(rec, only ?? undefined);
      const g = byKey.get(key);
      if (g) g.push(rec);
      else byKey.set(key, [rec]);
    }
    const parts: PreparedPart[] = [];
    for (const [key, recs] of byKey) parts.push(this.part(key, recs));
    return parts;
  }

  private part(key: string, recs: RecordOf[]): PreparedPart {
    const first = recs[0]!.r;
    const service = first.resource['service.name'];
    const part: PreparedPart = {
      key,
      seed: { traceId: first.traceId, service: typeof service === 'string' ? service : null },
      records: recs.length,
      kinds: [],
      vs: [],
      ats: [],
      jsons: [],
      finished: true,
    };
    let state = this.states.get(key);
    if (!state) {
      state = { map: new RunMapState(), resource: null, resourceJson: '' };
      this.states.set(key, state);
    }
    try {
      for (const rec of recs) {
        const withResource = this.resourceChanged(state, rec.r.resource);
        const mapped =
          rec.kind === 'span'
            ? mapSpan(rec.r, state.map, withResource)
            : rec.kind === 'log'
              ? mapLog(rec.r, state.map, withResource)
              : mapMetric(rec.r, withResource);
        for (const it of mapped) {
          // mapSpan and mapLog have checked each item against its kind's schema (mapping.ts, finish).
          part.jsons.push(prepareItem(it, { checked: true }));
          part.kinds.push(it.kind);
          part.vs.push(it.v ?? CURRENT_V);
          part.ats.push(it.at ?? null);
        }
      }
    } catch (e) {
      part.kinds = [];
      part.vs = [];
      part.ats = [];
      part.jsons = [];
      part.error = {
        code: e instanceof ProofloopError ? e.code : null,
        message: (e as Error).message,
      };
    }
    return part;
  }

  /** Whether `resource` differs from the one this key's events last carried (and it is now that one). */
  private resourceChanged(state: KeyState, resource: Attrs): boolean {
    // A request's records share one resource object: it is written out once a request, not once a record.
    if (resource === state.resource) return false;
    const json = JSON.stringify(resource);
    state.resource = resource;
    if (json === state.resourceJson) return false;
    state.resourceJson = json;
    return true;
  }

  private rememberTrace(trace: string, conv: string): void {
    if (this.traceConversation.get(trace) === conv) return;
    this.traceConversation.set(trace, conv);
  }

  /**
   * The run a record joins, as a key (`c:<conversation>`, `t:<trace>`, `s:<service>`, and for
   * metric points `m:<service>`). A trace
   * stays in the run it first joined and a conversation in the run it was first seen in, so a
   * record naming only one of them still finds the other's run. When a trace's first spans name
   * no conversation (a sender that sets it on the root span only, which ends last), that trace
   * keeps its own run and the conversation is bound to it from then on.
   */
  private keyOf(rec: RecordOf, requestConversation: string | undefined): string {
    const r = rec.r;
    const trace = r.traceId;
    const byTrace = trace ? this.traceHome.get(trace) : undefined;
    const conv =
      conversationOf(r.attributes, r.resource) ??
      (trace ? this.traceConversation.get(trace) : undefined) ??
      (!byTrace && joinsRequestConversation(r.resource) ? requestConversation : undefined);
    if (byTrace) {
      if (conv && !this.convHome.has(conv)) this.convHome.set(conv, byTrace);
      return byTrace;
    }
    if (conv) {
      let home = this.convHome.get(conv);
      if (!home) this.convHome.set(conv, (home = `c:${conv}`));
      if (trace) this.traceHome.set(trace, home);
      return home;
    }
    if (trace) {
      const home = `t:${trace}`;
      this.traceHome.set(trace, home);
      return home;
    }
    const service = r.resource['service.name'];
    const name = typeof service === 'string' && service ? service : 'unknown';
    // Metric points that name no session (Codex sends none on its metrics) are the service's:
    // kept in a run of their own (`otlp-metrics-<service>`), not guessed into a session's.
    return rec.kind === 'metric' ? `m:${name}` : `s:${name}`;
  }
}
