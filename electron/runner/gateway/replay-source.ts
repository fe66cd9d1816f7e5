/**
 * The `replay:<run>` answer source: the recorded answers of an earlier run, in order per lane,
 * served as the exact bytes recorded, but only to a request whose canonical form (the dialect's
 * normalisation) equals the recorded one, with the source run's paths relocated to this run's.
 * Anything else is a divergence, never served: the source
 * answers `none` with the cause (request, environment, structure, agent_version) and where.
 */
import type { StoredEvent } from '../../ledger';
import { canonicalDigests } from './canonical';
import type {
  AnswerSource,
  Dialect,
  DivergenceCause,
  NormaliseContext,
  SourceAnswer,
  SourceRequest,
} from './types';

export interface RecordedExchange {
  seq: number;
  answer: string;
  status: number;
  canonical: string;
  parts: string;
}

/** What a replay needs of its source run, read from its events. */
export interface RecordedRun {
  run_id: string;
  version: string;
  lanes: Map<string, RecordedExchange[]>;
  decisions: Map<string, { seq: number; allowed: boolean; rule: string }>;
  results: Map<string, { seq: number; digest: string }>;
  /** The source run's paths (its canonical form was computed with them). */
  workspace: string;
  home: string;
}

type P = Record<string, unknown>;

export function recordedRun(runId: string, events: readonly StoredEvent[]): RecordedRun {
  const r: RecordedRun = {
    run_id: runId,
    version: '',
    lanes: new Map(),
    decisions: new Map(),
    results: new Map(),
    workspace: '',
    home: '',
  };
  for (const e of events) {
    const p = e.payload as P;
    if (e.kind === 'run_started') {
      r.version = String((p.agent as P | undefined)?.version ?? '');
      const paths = p.paths as P | undefined;
      r.workspace = String(paths?.workspace ?? '');
      r.home = String(paths?.home ?? '');
    } else if (e.kind === 'model_responded' && typeof p.lane === 'string') {
      const req = p.request as P;
      const ans = p.answer as P;
      const lane = r.lanes.get(p.lane) ?? [];
      lane.push({
        seq: e.seq,
        answer: String(ans.digest),
        status: Number(ans.status ?? 200),
        canonical: String(req.canonical),
        parts: String(req.parts),
      });
      r.lanes.set(p.lane, lane);
    } else if ((e.kind === 'action_allowed' || e.kind === 'action_denied') && typeof p.call_id === 'string') {
      r.decisions.set(p.call_id, { seq: e.seq, allowed: e.kind === 'action_allowed', rule: String(p.rule) });
    } else if (
      e.kind === 'tool_returned' &&
      typeof p.call_id === 'string' &&
      typeof p.result_digest === 'string'
    ) {
      r.results.set(p.call_id, { seq: e.seq, digest: p.result_digest });
    }
  }
  return r;
}

export interface ReplaySourceOptions {
  dialect: Dialect;
  recorded: RecordedRun;
  readArtifact: (digest: string) => string;
  /** The live agent's version. */
  version: () => string;
  redact: (v: unknown) => unknown;
  workspace: string;
  home: string;
  /** What is run-specific in this run (normaliseText); default: its workspace and home. */
  ctx?: NormaliseContext;
}

/**
 * The recorded answer with the source run's workspace and home paths replaced by this run's: a
 * model names files by the absolute paths it was shown, and each run has its own folder.
 */
function relocate(
  body: string,
  from: { workspace: string; home: string },
  to: { workspace: string; home: string },
): string {
  let b = body;
  if (from.workspace) b = b.split(from.workspace).join(to.workspace);
  if (from.home) b = b.split(from.home).join(to.home);
  return b;
}

export function replaySource(o: ReplaySourceOptions): AnswerSource {
  return {
    kind: 'replay',
    answer(req: SourceRequest): Promise<SourceAnswer> {
      const lane = o.recorded.lanes.get(req.parsed.lane) ?? [];
      const rec = lane[req.index];
      const none = (
        cause: DivergenceCause,
        reason: string,
        detail: Record<string, unknown>,
      ): Promise<SourceAnswer> => Promise.resolve({ type: 'none', reason, cause, detail });
      if (!rec) {
        return none('structure', `the recording has no answer #${req.index + 1} in lane ${req.parsed.lane}`, {
          source_seq: lane.at(-1)?.seq ?? null,
        });
      }
      const live = canonicalDigests(
        o.dialect.canonical(o.redact(req.body), o.ctx ?? { workspace: o.workspace, home: o.home }),
      );
      if (live.all === rec.canonical) {
        return Promise.resolve({
          type: 'raw',
          status: rec.status,
          contentType: req.parsed.stream ? 'text/event-stream' : 'application/json',
          body: relocate(o.readArtifact(rec.answer), o.recorded, o),
        });
      }
      const want = JSON.parse(o.readArtifact(rec.parts)) as { head: string; messages: string[] };
      const detail: Record<string, unknown> = {
        source_seq: rec.seq,
        expected: rec.canonical,
        actual: live.all,
      };
      if (o.version() !== o.recorded.version) {
        return none(
          'agent_version',
          `agent version ${o.version()} (recorded: ${o.recorded.version})`,
          detail,
        );
      }
      if (want.head !== live.head) {
        return none('request', 'the system prompt, tools or settings of the request differ', {
          ...detail,
          part: 'head',
        });
      }
      const n = Math.min(want.messages.length, live.messages.length);
      for (let k = 0; k < n; k++) {
        if (want.messages[k] === live.messages[k]) continue;
        // Messages (Anthropic) or input items (Responses): the dialect's canonical messages, one for one.
        const b = req.body as { messages?: unknown[]; input?: unknown[] };
        const msgs = b.messages ?? b.input ?? [];
        const results = o.dialect.toolResultOf(msgs[k]);
        return results.length > 0
          ? none('environment', `a tool result the model sees differs (message ${k})`, {
              ...detail,
              part: `messages[${k}]`,
              call_ids: results.map((x) => x.call_id),
            })
          : none('request', `the conversation's message ${k} (instructions, prompt) differs`, {
              ...detail,
              part: `messages[${k}]`,
            });
      }
      return none(
        'structure',
        `the conversation has ${live.messages.length} messages (recorded: ${want.messages.length})`,
        { ...detail, part: 'messages.length' },
      );
    },
  };
}
