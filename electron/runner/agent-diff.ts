/**
 * Why two runs of a real agent part: the cause of the run diff's first divergence (shared/diff),
 * for two runs of one task that were not a replay of each other: `--repeat` (same configuration,
 * run again), two configurations of an agent (`--config A`, `--config B`), or two agents. The
 * diff compares a real agent's events by their normalised digests (shared/diff/normalise.ts,
 * agentView), so the first divergence is where the runs really differ; this names why:
 * - `request`: the model was asked otherwise: the system prompt, tools or settings (`head`), or a
 *   message of the conversation that is not a tool result (instructions, CLAUDE.md / AGENTS.md, the
 *   prompt); `agent_version` instead when the agents' versions differ;
 * - `environment`: a tool's result differs (a request's tool-result message, a tool_returned, a
 *   file change, the judge's verdict on the same actions);
 * - `decision`: the host's policy decided a call otherwise;
 * - `model`: the same request was answered otherwise (an upstream model is not deterministic);
 * - `structure`: a turn more or fewer, an early stop, a different ending.
 * With it, how the runs were set up differently (`configuration`: the configuring files whose
 * digests differ; the agent, its version, model or model source).
 */
import path from 'node:path';
import type { Ledger, StoredEvent } from '../ledger';
import type { RunDiff } from '../../shared/diff';
import { diffRunsParallel } from '../state';
import { readArtifact } from '../ledger/artifact-store';
import { realAgent } from './agents/registry';

export type PartCause = 'request' | 'environment' | 'decision' | 'model' | 'structure' | 'agent_version';

export interface DivergenceExplained {
  cause: PartCause;
  reason: string;
  /** The request's part that differs (`head`, `messages[3]`, `messages.length`), when a request does. */
  part?: string;
  /** How the two runs were set up differently (agent, version, model, configuring files). */
  setup: string[];
}

type P = Record<string, unknown>;
const pay = (e: StoredEvent | undefined): P => (e?.payload ?? {}) as P;
const obj = (v: unknown): P => (typeof v === 'object' && v !== null ? (v as P) : {});

interface Side {
  runId: string;
  dir: string;
  started: P;
  event: StoredEvent | undefined;
}

/** A real agent's run_started, or null (a simulated or imported run). */
function agentStart(ledger: Ledger, runId: string): P | null {
  const started = ledger.read(runId, { kinds: ['run_started'], limit: 1 })[0];
  const agent = obj(pay(started).agent);
  return typeof agent.name === 'string' && agent.name !== 'sim' && typeof agent.model_from === 'string'
    ? pay(started)
    : null;
}

function setupDifferences(a: P, b: P): string[] {
  const out: string[] = [];
  const aa = obj(a.agent);
  const ab = obj(b.agent);
  for (const k of ['name', 'version', 'model', 'model_from', 'variant', 'seed']) {
    if (k === 'model_from' && String(aa[k]).startsWith('replay:') && String(ab[k]).startsWith('replay:'))
      continue;
    if (aa[k] !== ab[k]) out.push(`agent ${k} ${String(aa[k])} → ${String(ab[k])}`);
  }
  if (a.config_digest !== b.config_digest) {
    const ca = obj(a.config);
    const cb = obj(b.config);
    const files = [...new Set([...Object.keys(ca), ...Object.keys(cb)])].sort();
    for (const f of files) {
      if (ca[f] === cb[f]) continue;
      out.push(`${f} ${ca[f] === undefined ? 'added' : cb[f] === undefined ? 'removed' : 'changed'}`);
    }
    if (out.length === 0 || !files.some((f) => ca[f] !== cb[f])) out.push('configuration digest differs');
  }
  if (a.policy_digest !== b.policy_digest) out.push('policy differs');
  return out;
}

/** A stored request (manifest of content-addressed parts) rebuilt, or null when an artifact is gone. */
function storedRequest(dir: string, digest: unknown): P | null {
  if (typeof digest !== 'string') return null;
  const manifest = readArtifact(dir, digest);
  if (manifest === null) return null;
  const m = JSON.parse(manifest) as P;
  for (const [k, v] of Object.entries(m)) {
    const ref = (x: unknown) => {
      const d = obj(x).$artifact;
      if (typeof d !== 'string') return x;
      const t = readArtifact(dir, d);
      return t === null ? null : (JSON.parse(t) as unknown);
    };
    m[k] = Array.isArray(v) ? v.map(ref) : ref(v);
  }
  return m;
}

/** Why two exchanges' requests differ: by their canonical parts (the head, each message). */
function requestCause(l: Side, r: Side): Omit<DivergenceExplained, 'setup'> {
  const reqL = obj(pay(l.event).request);
  const reqR = obj(pay(r.event).request);
  const va = obj(l.started.agent).version;
  const vb = obj(r.started.agent).version;
  const version =
    va !== vb
      ? { cause: 'agent_version' as const, reason: `agent version ${String(va)} → ${String(vb)}` }
      : null;
  const parts = (s: Side, req: P) => {
    const t = typeof req.parts === 'string' ? readArtifact(s.dir, req.parts) : null;
    return t === null ? null : (JSON.parse(t) as { head: string; messages: string[] });
  };
  const pl = parts(l, reqL);
  const pr = parts(r, reqR);
  if (!pl || !pr)
    return version ?? { cause: 'request', reason: 'the requests differ (their parts are not stored)' };
  if (pl.head !== pr.head)
    return (
      version ?? {
        cause: 'request',
        part: 'head',
        reason: 'the system prompt, tools or settings of the request differ',
      }
    );
  const n = Math.min(pl.messages.length, pr.messages.length);
  for (let k = 0; k < n; k++) {
    if (pl.messages[k] === pr.messages[k]) continue;
    const body = storedRequest(l.dir, reqL.digest);
    const msgs = (body?.messages ?? body?.input ?? []) as unknown[];
    let results: { call_id: string }[] = [];
    try {
      results = realAgent(String(obj(l.started.agent).name)).dialect.toolResultOf(msgs[k]);
    } catch {
      results = [];
    }
    if (results.length > 0)
      return {
        cause: 'environment',
        part: `messages[${k}]`,
        reason: `a tool result the model sees differs (message ${k})`,
      };
    return (
      version ?? {
        cause: 'request',
        part: `messages[${k}]`,
        reason: `the conversation's message ${k} (instructions, prompt) differs`,
      }
    );
  }
  return {
    cause: 'structure',
    part: 'messages.length',
    reason: `the conversation has ${pr.messages.length} messages (left: ${pl.messages.length})`,
  };
}

/** The cause of a diff's first divergence between two real agents' runs, or null (none, or not agents' runs). */
export function explainDivergence(ledger: Ledger, d: RunDiff): DivergenceExplained | null {
  const f = d.first_divergence;
  const sa = agentStart(ledger, d.left.run_id);
  const sb = agentStart(ledger, d.right.run_id);
  if (!f || !sa || !sb) return null;
  // The event at each side's seq; on the side an only_* row lacks, the event that run goes on with.
  const side = (runId: string, started: P, seq: number | null): Side => ({
    runId,
    dir: path.join(ledger.folder, runId),
    started,
    event: seq !== null ? ledger.event(runId, seq) : undefined,
  });
  const l = side(d.left.run_id, sa, f.left_seq);
  const r = side(d.right.run_id, sb, f.right_seq);
  const setup = setupDifferences(sa, sb);
  const why = (c: Omit<DivergenceExplained, 'setup'>): DivergenceExplained => ({ ...c, setup });
  const lk = l.event?.kind;
  const rk = r.event?.kind;
  // A call allowed in one run and denied in the other: the alignment may pair them or not.
  const decision = (k: string | undefined) => k === 'action_allowed' || k === 'action_denied';
  if (decision(lk) && decision(rk) && (lk !== rk || pay(l.event).rule !== pay(r.event).rule)) {
    return why({
      cause: 'decision',
      reason: `the policy decided ${lk === 'action_allowed' ? 'allow' : 'deny'} (${String(pay(l.event).rule)}) → ${rk === 'action_allowed' ? 'allow' : 'deny'} (${String(pay(r.event).rule)})`,
    });
  }
  if (f.type !== 'changed' || !l.event || !r.event) {
    const left = f.type === 'only_left';
    const only = left ? l.event : r.event;
    return why({
      cause: 'structure',
      reason: `${left ? d.left.run_id : d.right.run_id} has ${only?.kind ?? 'an event'} the other has not (a turn more or fewer, an early stop)`,
    });
  }
  if (lk !== rk) return why({ cause: 'structure', reason: `${lk} where the other run has ${rk}` });
  switch (lk) {
    case 'model_responded': {
      const qa = obj(pay(l.event).request).canonical;
      const qb = obj(pay(r.event).request).canonical;
      if (qa !== qb) return why(requestCause(l, r));
      return why({ cause: 'model', reason: 'the same request was answered otherwise' });
    }
    case 'model_proposed':
      return why({ cause: 'model', reason: 'the model proposed another call' });
    case 'tool_returned':
    case 'tool_timed_out':
    case 'file_changed':
      return why({ cause: 'environment', reason: `a tool's result differs (${lk})` });
    case 'judge_verdict':
      return why({ cause: 'environment', reason: "the judge's verdict on the workspace differs" });
    default:
      return why({ cause: 'structure', reason: `${lk} differs` });
  }
}

/** The run diff with, for two real agents' runs, the cause of its first divergence. */
export async function diffRunsExplained(
  ledger: Ledger,
  left: string,
  right: string,
): Promise<RunDiff & { cause: DivergenceExplained | null }> {
  const d = await diffRunsParallel(ledger, left, right);
  return { ...d, cause: explainDivergence(ledger, d) };
}
