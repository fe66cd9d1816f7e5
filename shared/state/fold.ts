import type { KnownKind } from '../protocol';
import { isSessionFormat } from '../formats';
import { overBudgets, withUse } from './budget';
import {
  addContext,
  addError,
  boundedArgs,
  callFor,
  clip,
  clipOrNull,
  findCall,
  isOpen,
  isRecord,
  note,
  num,
  push,
  replaceCall,
  safeJson,
  str,
  type Draft,
} from './draft';
import { STATE_CAPS, type CallRecord, type FoldEvent, type RunState } from './types';

function addCall(s: Draft, call: CallRecord): void {
  // The window keeps the most recent calls; an evicted open call stops counting as open.
  const evicted = s.calls.items.length >= STATE_CAPS.calls ? s.calls.items[0]! : null;
  const calls = push(s.calls, call, STATE_CAPS.calls);
  calls.open = s.calls.open + 1 - (evicted && isOpen(evicted) ? 1 : 0);
  s.calls = calls;
}

/**
 * The call an event is about. Telemetry (`otlp` runs) has no proposals of Claude Code's or Codex's
 * calls, only their decisions, invocations and results: there a call is known from the first of
 * them. Elsewhere an unknown call is noted (callFor).
 */
function callOf(s: Draft, e: FoldEvent, callId: string, p: Record<string, unknown>): number {
  if (e.fmt !== 'otlp' || callId === '' || findCall(s, callId) >= 0) return callFor(s, e, callId);
  addCall(s, {
    call_id: callId,
    n: s.calls.total + 1,
    tool: str(p.tool) ?? '',
    args: null,
    status: 'proposed',
    proposed_seq: null,
    tokens: null,
    decision: null,
    invoked_seq: null,
    result: null,
    timed_out: null,
    duration_ms: null,
  });
  return s.calls.items.length - 1;
}

/** What each known kind does to the state (evolve has checked the event's place in the run). */
export function fold(s: Draft, e: FoldEvent, kind: KnownKind, p: Record<string, unknown>): RunState {
  switch (kind) {
    case 'run_started': {
      if (s.status !== 'empty') note(s, e, 'started_twice', `run_started again (run was ${s.status})`);
      const agent = isRecord(p.agent) ? p.agent : {};
      // Own properties whatever the key (a budget key `__proto__` included), on a plain object.
      const limits: Record<string, number> = Object.fromEntries(
        isRecord(p.budget)
          ? Object.entries(p.budget).filter((e): e is [string, number] => num(e[1]) !== null)
          : [],
      );
      s.status = 'running';
      s.why = null;
      s.ended = null;
      if (s.started_at === null) {
        const ms = Date.parse(e.at);
        s.started_at = e.at;
        s.started_ms = Number.isFinite(ms) ? ms : null;
      }
      s.task = {
        task_id: str(p.task_id) ?? '',
        goal: clip(str(p.goal) ?? ''),
        policy_digest: str(p.policy_digest),
        mode: str(p.mode),
        of: str(p.of),
      };
      s.agent = { name: str(agent.name) ?? '', variant: str(agent.variant), seed: num(agent.seed) };
      s.budget = { ...s.budget, limits, over: overBudgets(limits, s.budget.used) };
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'model_proposed': {
      const callId = str(p.call_id) ?? `(seq ${e.seq})`;
      const tokens = num(p.tokens);
      const argsJson = safeJson(p.args);
      if (findCall(s, callId) >= 0) note(s, e, 'duplicate_call', `call ${callId} proposed again`);
      addCall(s, {
        call_id: callId,
        n: s.calls.total + 1,
        tool: str(p.tool) ?? '',
        args: boundedArgs(p.args, argsJson),
        status: 'proposed',
        proposed_seq: e.seq,
        tokens,
        decision: null,
        invoked_seq: null,
        result: null,
        timed_out: null,
        duration_ms: null,
      });
      addContext(s, {
        seq: e.seq,
        kind,
        role: 'model',
        text: clip(`${str(p.tool) ?? ''} ${argsJson}`),
        tokens,
      });
      withUse(s, e.at, tokens ?? 0, 1);
      return s;
    }
    case 'action_allowed':
    case 'action_denied': {
      const allowed = kind === 'action_allowed';
      const callId = str(p.call_id) ?? '';
      const rule = str(p.rule) ?? '';
      const reason = clipOrNull(p.reason);
      // ProofLoop's host names no decider: it is the decider.
      const by = str(p.decided_by) ?? (e.fmt === undefined || e.fmt === 'proofloop' ? 'proofloop' : null);
      const i = callOf(s, e, callId, p);
      let tool: string | null = null;
      let counted = true;
      if (i >= 0) {
        const c = s.calls.items[i]!;
        tool = c.tool;
        const d = c.decision;
        if (d && d.allowed !== allowed) {
          // Two sources (a transcript and telemetry, the harness and ProofLoop's host) disagree.
          note(
            s,
            e,
            'decision_conflict',
            `call ${callId} ${allowed ? 'allowed' : 'denied'} by ${rule}, but ${d.allowed ? 'allowed' : 'denied'} by ${d.rule} at seq ${d.seq}`,
          );
        } else if (d && d.rule === rule) {
          note(
            s,
            e,
            'decided_twice',
            `call ${callId} was already ${d.allowed ? 'allowed' : 'denied'} at seq ${d.seq}`,
          );
        } else if (d) {
          // Another source saying the same: the call's decision stays the first, naming both.
          counted = false;
          replaceCall(s, i, { ...c, decision: { ...d, also: [...d.also, rule].slice(-4) } });
        }
        if (counted || !d) {
          const status = allowed ? (c.status === 'proposed' ? 'allowed' : c.status) : 'denied';
          replaceCall(s, i, { ...c, status, decision: { allowed, rule, reason, seq: e.seq, by, also: [] } });
        }
      }
      if (!allowed && counted) {
        s.denials = push(
          s.denials,
          { seq: e.seq, call_id: callId, tool, rule, reason: reason ?? '', by },
          STATE_CAPS.denials,
        );
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'tool_invoked': {
      const callId = str(p.call_id) ?? '';
      const i = callOf(s, e, callId, p);
      if (i >= 0) {
        const c = s.calls.items[i]!;
        // Telemetry's signals arrive in no causal order: a span may come before the decision's log.
        if (c.decision ? !c.decision.allowed : e.fmt !== 'otlp') {
          note(
            s,
            e,
            'invoked_without_allow',
            `call ${callId} invoked but ${c.decision ? 'denied' : 'never allowed'}`,
          );
        }
        replaceCall(s, i, { ...c, status: 'running', invoked_seq: e.seq });
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'tool_returned':
    case 'tool_timed_out': {
      const returned = kind === 'tool_returned';
      const callId = str(p.call_id) ?? '';
      const status = returned ? (str(p.status) ?? '') : 'timed_out';
      const excerpt = returned ? clipOrNull(p.excerpt) : null;
      const timeoutMs = returned ? 0 : (num(p.timeout_ms) ?? 0);
      const i = callOf(s, e, callId, p);
      if (i >= 0) {
        const c = s.calls.items[i]!;
        if (e.fmt === 'otlp' && c.result && returned && c.result.status === status) {
          // Telemetry reports a result twice (Claude Code's tool span and its tool_result log): the same one.
          withUse(s, e.at, 0, 0);
          return s;
        }
        if (c.result || c.timed_out) {
          note(
            s,
            e,
            'result_twice',
            `call ${callId} already ended at seq ${c.result?.seq ?? c.timed_out?.seq}`,
          );
        } else if (c.invoked_seq === null && !isSessionFormat(e.fmt) && e.fmt !== 'otlp') {
          // A session transcript records the call and its result, not the host's invocation.
          note(s, e, 'result_without_invoke', `call ${callId} ended without being invoked`);
        }
        replaceCall(
          s,
          i,
          returned
            ? {
                ...c,
                status: 'returned',
                result: { status, excerpt, bytes: num(p.bytes), seq: e.seq },
                duration_ms: num(p.duration_ms),
              }
            : {
                ...c,
                status: 'timed_out',
                timed_out: { timeout_ms: timeoutMs, seq: e.seq },
                duration_ms: timeoutMs,
              },
        );
      }
      if (returned) {
        addContext(s, {
          seq: e.seq,
          kind,
          role: 'tool',
          text: clip(`${status}${excerpt ? ': ' + excerpt : ''}`),
          tokens: null,
        });
        if (status !== 'ok' && status !== 'success')
          addError(s, e, callId, `call ${callId} returned ${status}${excerpt ? ': ' + excerpt : ''}`);
      } else {
        addError(s, e, callId, `call ${callId} timed out after ${timeoutMs} ms`);
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'model_responded': {
      const tokens = num(p.tokens);
      addContext(s, { seq: e.seq, kind, role: 'model', text: clip(str(p.content) ?? ''), tokens });
      withUse(s, e.at, tokens ?? 0, 0);
      return s;
    }
    case 'context_updated': {
      const before = num(p.tokens_before);
      const after = num(p.tokens_after);
      const op = str(p.op) ?? '';
      const text = before !== null || after !== null ? `${op} ${before ?? '?'} → ${after ?? '?'} tokens` : op;
      addContext(s, { seq: e.seq, kind, role: 'context', text: clip(text), tokens: after });
      if (after !== null) s.context = { ...s.context, tokens: after };
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'file_changed': {
      const path = str(p.path) ?? '';
      const after = str(p.after);
      const patch = clipOrNull(p.patch);
      const items = s.files.items;
      let i = -1;
      for (let j = items.length - 1; j >= 0; j--) {
        if (items[j]!.path === path) {
          i = j;
          break;
        }
      }
      if (i >= 0) {
        const f = items[i]!;
        // The most recently changed file moves to the end, so the window keeps recent activity.
        const next = items.slice(0, i).concat(items.slice(i + 1));
        next.push({ ...f, changes: f.changes + 1, last_seq: e.seq, after, patch });
        s.files = { ...s.files, items: next, changes: s.files.changes + 1 };
      } else {
        const rec = {
          path,
          changes: 1,
          first_seq: e.seq,
          last_seq: e.seq,
          before: str(p.before),
          after,
          patch,
        };
        s.files = { ...push(s.files, rec, STATE_CAPS.files), changes: s.files.changes + 1 };
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'budget_exhausted': {
      const budget = str(p.budget) ?? '';
      const limit = num(p.limit) ?? 0;
      const used = num(p.used) ?? 0;
      withUse(s, e.at, 0, 0);
      s.budget = { ...s.budget, exhausted: { budget, limit, used, seq: e.seq } };
      if (s.status === 'running') s.why = `budget ${budget} exhausted: used ${used} of ${limit}`;
      addError(s, e, null, `budget ${budget} exhausted: used ${used} of ${limit}`);
      return s;
    }
    case 'judge_verdict': {
      const passed = p.passed === true;
      const v = {
        seq: e.seq,
        passed,
        tests_passed: num(p.tests_passed),
        tests_failed: num(p.tests_failed),
        command: clipOrNull(p.command),
      };
      const list = push(s.verdicts, v, STATE_CAPS.verdicts);
      s.verdicts = {
        ...list,
        passed: list.passed + (passed ? 1 : 0),
        failed: list.failed + (passed ? 0 : 1),
        last: v,
      };
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'run_completed':
    case 'run_failed': {
      const completed = kind === 'run_completed';
      const outcome = clipOrNull(p.outcome);
      const reason = clipOrNull(p.reason);
      const errorType = str(p.error_type);
      withUse(s, e.at, 0, 0);
      s.status = completed ? 'completed' : 'failed';
      s.ended = { seq: e.seq, kind, outcome, reason, error_type: errorType };
      s.why = completed
        ? `completed: ${outcome ?? '(no outcome)'}`
        : `failed: ${reason ?? '(no reason)'}${errorType ? ` (${errorType})` : ''}`;
      if (!completed)
        addError(s, e, null, `run failed: ${reason ?? ''}${errorType ? ` (${errorType})` : ''}`);
      return s;
    }
    case 'run_resumed': {
      const fromSeq = num(p.from_seq) ?? 0;
      s.resumes = push(s.resumes, { seq: e.seq, from_seq: fromSeq }, STATE_CAPS.resumes);
      if (s.status === 'completed' || s.status === 'failed') {
        note(s, e, 'after_end', `run resumed after it ${s.status} at seq ${s.ended?.seq ?? '?'}`);
      }
      if (s.status !== 'empty') {
        s.status = 'running';
        s.why = null;
        s.ended = null;
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'event_annotated': {
      const target = num(p.target_seq) ?? 0;
      if (target > e.seq) note(s, e, 'annotates_future', `annotation of seq ${target}, which comes later`);
      s.annotations = push(
        s.annotations,
        { seq: e.seq, target_seq: target, note: clip(str(p.note) ?? '') },
        STATE_CAPS.annotations,
      );
      return s;
    }
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}
