/**
 * What the runs list shows of a run beyond its row in `runs`: the project (cwd), the model, the
 * first prompt as a title, and tokens as the format counts them (a run's glance). Read from a few
 * events and one aggregate, never from all of a run's events into memory: for the list's most
 * recently active runs with the list itself, for the other rows when they are shown (runs.details,
 * with the counts of the state at the head).
 */
import { interpret } from '../../shared/formats';
import { usageTokens } from '../../shared/formats/claude-code';
import { itemOf } from '../../shared/formats/codex';
import { isContextPrompt } from '../../shared/formats/prompt';
import { otlpTitle, promptOfEvent, type OtlpPrompt } from '../../shared/formats/otlp-prompt';
import { ID_RANGE, idRange } from '../ledger/event-ids';
import { BoundedMap } from '../bounded-map';
import type { ServiceContext } from './context';
import type { ResultOf } from '../../shared/api/contract';
import type { Handler as H } from './handler';
import { requireRunOf } from './ledger';
import type { RunRow } from '../ledger/types';
import type { RunState } from '../../shared/state';
import { stateAt } from '../state';
import { engineStateAt } from '../state/engine-state';
import { isObj, nonEmpty as str, type Obj } from '../../shared/json-read.js';

const TITLE_CHARS = 200;
/**
 * Claude Code's tokens need every assistant line's usage (one SQL pass over the run, ~35 ms per
 * 1,000 events here): counted for runs up to this many events, so that one row of the list never
 * holds the service for more than a moment. Larger sessions show no token count in the list.
 */
export const CC_TOKENS_MAX_EVENTS = 20_000;
/** Summaries by run and head: the list asks again on every change of the folder. */
const MEMO_MAX = 2000;
const memo = new BoundedMap<string, unknown>(MEMO_MAX);
const clipTitle = (text: string): string => text.replace(/\s+/g, ' ').trim().slice(0, TITLE_CHARS);
const ASSISTANT_KINDS = ['model_responded', 'model_reasoned', 'model_proposed', 'cc_assistant'];

/** Events of an OTLP run read for its title: the first this many (prompts come early). */
const OTLP_SCAN = 200;
const OTLP_PROMPT_KINDS = ['claude_code_user_prompt', 'codex_user_prompt'];
const MODEL_KINDS = ['model_proposed', 'model_responded'];

/**
 * An OTLP run's title (its service and the first prompt its records carry) and model. The
 * harnesses' user_prompt events first (rare kinds, read through their index), then the first
 * events of the run, whichever span or log holds the prompt.
 */
async function otlpSummary(
  meta: Obj,
  read: (kinds: string[] | undefined, limit: number) => Promise<{ kind: string; payload: unknown }[]>,
): Promise<{ title: string | null; model: string | null }> {
  const otlp = isObj(meta.otlp) ? meta.otlp : null;
  const service = otlp ? str(otlp.service) : null;
  let prompt: OtlpPrompt | null = null;
  let withheld: OtlpPrompt | null = null;
  const look = (events: { kind: string; payload: unknown }[]) => {
    for (const e of events) {
      if (!isObj(e.payload)) continue;
      const p = promptOfEvent(e.kind, e.payload);
      if (p && 'text' in p) return (prompt = p);
      withheld ??= p;
    }
    return null;
  };
  look(await read(OTLP_PROMPT_KINDS, 4));
  if (!prompt) look(await read(undefined, OTLP_SCAN));
  const m = (await read(MODEL_KINDS, 1))[0];
  const model = m && isObj(m.payload) ? str(m.payload.model) : null;
  return { title: otlpTitle(service, prompt ?? withheld), model };
}

type Glance = ResultOf<'run.summary'>;
type ListGlance = Glance & { calls?: number; errors?: number };

/**
 * The runs a list carries glances for: a first screen of the most recently active ones. Bounded
 * so that a large folder's list neither waits for hundreds of glances nor grows by a title per
 * run (the list is read again every second while a run is live); other rows ask as they are
 * shown (runs.details).
 */
export const LIST_GLANCES = 40;

const memoKey = (engine: { location: string }, run: RunRow) =>
  `${engine.location}\u0000${run.run_id}\u0000${run.head_seq}`;
const countsKey = (engine: { location: string }, run: RunRow) => `${memoKey(engine, run)}\u0000counts`;

/** The counts of the state at a run's head that a row shows (tokens: the state's, when the format counts none). */
interface Counts {
  calls: number;
  errors: number;
  tokens: number | null;
}

/**
 * Events the list folds, over its glanced runs, to carry their counts too: a small folder's rows
 * are drawn whole with the list, without a runs.details call and a second render while the user is
 * about to click (bench/peer.ts). Larger runs' counts come with runs.details, as their rows show.
 */
export const LIST_COUNTS_EVENTS = 2_000;

/**
 * The runs list with the glances of its LIST_GLANCES most recently active runs: a list read used
 * to show ids only, and a small folder's titles came one round trip later, while the page was
 * still drawing itself (first messages 1.2× the peer viewer's, bench/peer.ts). Known glances cost
 * a map lookup (a live run's, one glance per list). Small runs' glances carry their counts too
 * (LIST_COUNTS_EVENTS).
 */
export async function withGlances<R extends RunRow>(
  ctx: Pick<ServiceContext, 'engine' | 'sqlite'>,
  runs: R[],
): Promise<(R & { glance?: ListGlance })[]> {
  const active = (r: RunRow) => r.last_at ?? r.created_at;
  const top = [...runs]
    .sort((a, b) => (active(a) < active(b) ? 1 : active(a) > active(b) ? -1 : 0))
    .slice(0, LIST_GLANCES);
  const glances = new Map<RunRow, ListGlance>();
  let budget = LIST_COUNTS_EVENTS;
  for (const r of top) {
    let g: ListGlance;
    try {
      g = await glanceOf(ctx, r);
    } catch {
      // The list never fails for a glance: that row shows without one, and runs.details says why.
      continue;
    }
    // Counts already folded cost nothing (countsOf memoises them by run and head).
    const known = memo.has(countsKey(ctx.engine(), r));
    if (known || r.head_seq <= budget) {
      if (!known) budget -= r.head_seq;
      try {
        g = withCounts(g, await countsOf(ctx, r));
      } catch {
        // Its counts come with runs.details, which leaves the row out if they cannot be read.
      }
    }
    glances.set(r, g);
  }
  return runs.map((r) => {
    const g = glances.get(r);
    return g ? { ...r, glance: g } : r;
  });
}

/** The counts of a run's state at its head, memoised by run and head like its glance. */
async function countsOf(ctx: Pick<ServiceContext, 'engine' | 'sqlite'>, run: RunRow): Promise<Counts> {
  const engine = ctx.engine();
  const key = countsKey(engine, run);
  const known = memo.get(key) as Counts | undefined;
  if (known) return known;
  const ledger = ctx.sqlite();
  const state: RunState = ledger
    ? stateAt(ledger, run.run_id, run.head_seq, { recent: true }).state
    : (await engineStateAt(engine, run.run_id, run.head_seq)).state;
  const used = state.budget.used.tokens;
  const out = { calls: state.calls.total, errors: state.errors.total, tokens: used > 0 ? used : null };
  memo.set(key, out);
  return out;
}

/** A glance with its state's counts; tokens from the state when the format counts none. */
const withCounts = (g: Glance, c: Counts) => ({
  ...g,
  tokens: g.tokens ?? c.tokens,
  calls: c.calls,
  errors: c.errors,
});

export function summaryHandlers(ctx: ServiceContext) {
  const summary: H<'run.summary'> = async ({ run_id }) =>
    glanceOf(ctx, await requireRunOf(ctx.engine(), run_id));
  /**
   * The rows on screen in one call: the list asked for each row's summary and its state at the
   * head (two requests a row, three rows at a time), and a small folder's titles came in only after
   * several round trips of a page that was still busy drawing itself (bench/peer.ts).
   */
  const details: H<'runs.details'> = async ({ run_ids }) => {
    const out: ResultOf<'runs.details'> = [];
    for (const id of new Set(run_ids)) {
      const run = await ctx.engine().run(id);
      if (!run) continue;
      try {
        out.push(withCounts(await glanceOf(ctx, run), await countsOf(ctx, run)));
      } catch {
        // One row's failure is not the batch's: that row shows without details, and opening the
        // run shows why (its state pane asks state.at itself).
      }
    }
    return out;
  };
  return { 'run.summary': summary, 'runs.details': details };
}

/** A run's glance (`run.summary`), memoised by run and head: events never change below the head. */
export async function glanceOf(ctx: Pick<ServiceContext, 'engine' | 'sqlite'>, run: RunRow): Promise<Glance> {
  // Reads through the engine; the token sums are SQL over a runs folder's ledger (none on a team ledger).
  const engine = ctx.engine();
  const ledger = ctx.sqlite();
  const run_id = run.run_id;
  const key = memoKey(engine, run);
  const known = memo.get(key) as Glance | undefined;
  if (known) return known;
  const fmt = run.format;
  const first = (kinds: string[], limit: number) => engine.read(run_id, { kinds, limit });
  let project: string | null = null;
  let model: string | null = null;
  let title: string | null = null;
  let tokens: number | null = null;

  // The first prompt a person wrote; else a slash command's name; else the first prompt at all.
  let fallback: string | null = null;
  for (const e of await first(['user_prompted'], 20)) {
    const v1 = interpret(fmt, e.kind, e.payload, { seq: e.seq, run_id, source: e.source ?? null });
    const p = (v1?.payload ?? e.payload) as Obj;
    const text = str(p.content);
    if (!text) continue;
    if (p.meta !== true && !isContextPrompt(text)) {
      title = clipTitle(text);
      break;
    }
    const command = /<command-name>([^<]+)<\/command-name>/.exec(text)?.[1];
    fallback ??= command ? command.trim() : null;
    fallback ??= p.meta === true ? null : clipTitle(text);
  }
  title ??= fallback;
  const runNo = ledger?.runNo(run_id);
  const range = runNo === undefined ? null : idRange(runNo, 1, Number.MAX_SAFE_INTEGER);
  if (fmt === 'claude_code') {
    // Most lines carry the cwd; a file-history snapshot (often the first) does not.
    for (const e of await engine.read(run_id, { limit: 20 })) {
      project = str((e.payload as Obj).cwd);
      if (project) break;
    }
    const a = (await first(ASSISTANT_KINDS, 1))[0];
    const msg = a && isObj((a.payload as Obj).message) ? ((a.payload as Obj).message as Obj) : null;
    model = msg ? str(msg.model) : null;
    // Claude Code repeats a message's usage on each of its lines: the last line of each message.id.
    const rows =
      run.head_seq > CC_TOKENS_MAX_EVENTS || !ledger || !range
        ? []
        : (ledger.db
            .prepare(
              `SELECT json_extract(payload, '$.message.usage') AS usage FROM events
          WHERE id IN (
            SELECT MAX(id) FROM events
             WHERE ${ID_RANGE} AND kind IN (${ASSISTANT_KINDS.map(() => '?').join(', ')})
               AND json_extract(payload, '$.message.usage') IS NOT NULL
             GROUP BY coalesce(json_extract(payload, '$.message.id'), id))`,
            )
            .all(...range, ...ASSISTANT_KINDS) as { usage: string | null }[]);
    if (rows.length > 0) {
      tokens = 0;
      for (const r of rows) {
        try {
          tokens += usageTokens(r.usage === null ? null : JSON.parse(r.usage));
        } catch {
          // a usage that is no JSON counts as none
        }
      }
    }
  } else if (fmt === 'codex') {
    const meta = (await first(['run_started'], 1))[0];
    project = meta ? str(itemOf(meta.payload as Obj).cwd) : null;
    const turn = (await first(['codex_turn_context'], 1))[0];
    model = turn ? str(itemOf(turn.payload as Obj).model) : null;
    // Codex's token_count is cumulative: the last one is the run's.
    const last =
      ledger && range
        ? (ledger.db
            .prepare(
              `SELECT payload FROM events WHERE ${ID_RANGE} AND kind = 'codex_event_token_count'
          ORDER BY id DESC LIMIT 1`,
            )
            .get(...range) as { payload: string } | undefined)
        : undefined;
    if (last) {
      const v1 = interpret(fmt, 'codex_event_token_count', JSON.parse(last.payload) as Obj, {
        seq: 0,
        run_id,
      });
      const t = v1?.payload.tokens_total;
      tokens = typeof t === 'number' ? t : null;
    }
  } else if (fmt === 'otlp') {
    // Through the engine: on a team ledger too, an OTLP run is titled by its service and prompt.
    ({ title, model } = await otlpSummary(run.meta, (kinds, limit) =>
      engine.read(run_id, { ...(kinds ? { kinds } : {}), limit }),
    ));
  } else {
    const start = (await first(['run_started'], 1))[0];
    const p = start
      ? ((interpret(fmt, 'run_started', start.payload, { seq: start.seq, run_id })?.payload ??
          start.payload) as Obj)
      : null;
    if (p) {
      title ??= str(p.goal);
      const agent = isObj(p.agent) ? p.agent : null;
      model = agent ? (str(agent.model) ?? null) : null;
      project = str(p.cwd);
    }
    // An Inspect sample's eval (runs.meta.eval) is its project: the list groups and filters by it.
    const ev = isObj(run.meta.eval) ? run.meta.eval : null;
    if (fmt === 'inspect' && ev) {
      const name = [str(ev.task), str(ev.model)].filter((x) => x !== null).join(' · ');
      project = `${name || 'eval'} (${str(ev.eval_id) ?? str(ev.task_id) ?? run_id.split(':')[0]})`;
      model ??= str(ev.model);
      // A sample's input (its goal) is often several lines: one line in the list.
      if (title !== null) title = clipTitle(title);
    }
  }
  const out = { run_id, head_seq: run.head_seq, format: fmt, project, model, title, tokens };
  memo.set(key, out);
  return out;
}
