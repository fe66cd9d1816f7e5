/**
 * A harness's decision on a call, as protocol v1 reads it, whichever source told it: Claude Code's
 * transcript (`permissionDecision` on a tool result line), Codex's rollout (a call its exec policy
 * rejected), either program's telemetry (`tool_decision` log records) or ProofLoop's own host. One
 * function, so that two sources speaking of one call name it alike (kind, rule, who decided) and a
 * difference between them is a real disagreement, not a difference of spelling.
 */

export type DecidedBy = 'config' | 'hook' | 'user' | 'proofloop' | 'unknown' | (string & {});

export interface HarnessDecision {
  kind: 'action_allowed' | 'action_denied';
  payload: {
    call_id: string;
    /** `<harness>.<source as the harness names it, lower case>`: `claude_code.hook`, `codex.config`. */
    rule: string;
    /** Why (always, for a denial; an allow has one only when its source gave one). */
    reason?: string;
    /** Who decided, in one vocabulary: config, hook, user, proofloop (else the harness's own word). */
    decided_by: DecidedBy;
    /** The harness's words as written: `accept`, `reject`, `approved`, `denied`, `abort`… */
    decision: string | null;
    source: string | null;
    harness: string;
    tool?: string;
    reason_type?: string;
  };
}

const ALLOWED: ReadonlySet<string> = new Set([
  'accept',
  'accepted',
  'allow',
  'allowed',
  'approved',
  'approved_for_session',
  'approve',
]);

/** Whether a harness's decision word allows the call (anything else denies it). */
export const allows = (decision: string): boolean => ALLOWED.has(decision.toLowerCase());

/**
 * Who decided. Claude Code says config, hook, user_permanent, user_temporary, user_reject…;
 * Codex Config, User, AutoReview…; ProofLoop's host proofloop.
 */
export function decidedBy(source: string | null | undefined): DecidedBy {
  if (!source) return 'unknown';
  const s = source.toLowerCase();
  if (s.startsWith('user')) return 'user';
  return s;
}

export function harnessDecision(d: {
  harness: string;
  call_id: string;
  decision: string | null;
  source: string | null;
  reason?: string | null;
  reason_type?: string | null;
  tool?: string | null;
}): HarnessDecision {
  const value = d.decision ?? '';
  const by = decidedBy(d.source);
  const allowed = allows(value);
  const payload: HarnessDecision['payload'] = {
    call_id: d.call_id,
    rule: `${d.harness}.${d.source ? d.source.toLowerCase() : 'unknown'}`,
    decided_by: by,
    decision: d.decision,
    source: d.source,
    harness: d.harness,
  };
  const reason = d.reason || (allowed ? null : `${value || 'denied'} by ${by}`);
  if (reason) payload.reason = reason;
  if (d.tool) payload.tool = d.tool;
  if (d.reason_type) payload.reason_type = d.reason_type;
  return { kind: allowed ? 'action_allowed' : 'action_denied', payload };
}
