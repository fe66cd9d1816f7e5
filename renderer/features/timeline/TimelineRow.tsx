import { memo, useEffect, useSyncExternalStore } from 'react';
import { useApp } from '../../store';
import type { Finding, StoredEvent } from '../../api/types';
import { KindIcon } from '../../ui/icons';
import { durationOf, formatMs, isErrorEvent, summarize, toneOf } from '../../ui/kinds';
import { pageOf, type EventCache } from './eventCache';
import { asV1, readAs } from '../formats/readAs';
import { SubagentLink } from '../conversation/SubagentLink';

const bySeqCache = new WeakMap<readonly Finding[], Map<number, Finding[]>>();

/** Findings indexed by seq, built once per findings array. */
export function findingsBySeq(findings: readonly Finding[]): Map<number, Finding[]> {
  let m = bySeqCache.get(findings);
  if (!m) {
    m = new Map();
    for (const f of findings) {
      if (f.seq === null) continue;
      const list = m.get(f.seq) ?? [];
      list.push(f);
      m.set(f.seq, list);
    }
    bySeqCache.set(findings, m);
  }
  return m;
}

export function useEvent(cache: EventCache | null, seq: number): StoredEvent | undefined {
  const ev = useSyncExternalStore(
    (fn) => (cache ? cache.subscribe(pageOf(seq), fn) : () => {}),
    () => cache?.peek(seq),
  );
  useEffect(() => {
    if (!ev && cache) cache.get(seq);
  }, [ev, cache, seq]);
  return ev;
}

interface RowProps {
  seq: number;
  cache: EventCache;
  /** The run's format: rows of imported runs summarise their v1 reading. */
  fmt: string | null;
  runStart: number | null;
  top: number;
  height: number;
}

/** One timeline row. Selection is read per row, so a step re-renders two rows, not the list. */
/** Findings that mean "this event is stored as written but is not what its schema says". */
export const WARNING_CODES: ReadonlySet<string> = new Set(['invalid_event', 'number_rounded']);

export const TimelineRow = memo(function TimelineRow({ seq, cache, fmt, runStart, top, height }: RowProps) {
  const selected = useApp((s) => s.viewSeq === seq);
  const findings = useApp((s) => findingsBySeq(s.findings).get(seq));
  const stored = useEvent(cache, seq);
  const ev = stored ? asV1(fmt, stored) : undefined;
  const warnings = findings?.filter((f) => WARNING_CODES.has(f.code));
  const tone = ev ? toneOf(ev.kind) : 'other';
  const t = ev && runStart !== null ? Date.parse(ev.at) - runStart : null;
  // A duration the format's view had to infer (0) is no measurement: show none.
  const d = ev && !(stored && readAs(fmt, stored)?.inferred.includes('duration_ms')) ? durationOf(ev) : null;
  const bad = ev ? isErrorEvent(ev) : false;
  return (
    <div
      className={`tl-row tone-${tone}${selected ? ' selected' : ''}${bad ? ' is-error' : ''}${findings ? ' has-finding' : ''}`}
      style={{ transform: `translateY(${top}px)`, height }}
      data-testid="timeline-row"
      data-seq={seq}
      data-kind={ev?.kind}
      aria-selected={selected}
      role="row"
      onClick={() => useApp.getState().setSeq(seq)}
    >
      <span className="tl-seq mono">{seq}</span>
      {ev ? (
        <>
          {warnings && warnings.length > 0 && (
            <span
              className="tl-warn"
              data-testid="warning-mark"
              data-code={warnings[0]!.code}
              title={warnings.map((f) => `${f.code}: ${f.message}`).join('\n')}
              aria-label={`warning: ${warnings[0]!.message}`}
            >
              ⚠
            </span>
          )}
          <span className={`tl-kind tone-${tone}`}>
            <KindIcon tone={tone} />
            <span className="mono">{ev.kind}</span>
          </span>
          <span className="tl-summary mono">{summarize(ev)}</span>
          <SubagentMark ev={ev} />
          {findings && (
            <span
              className="badge bad tl-finding"
              data-testid="row-finding"
              title={findings.map((f) => `${f.code}: ${f.message}`).join('\n')}
            >
              ⚠ {findings[0]!.code}
              {findings.length > 1 ? ` +${findings.length - 1}` : ''}
            </span>
          )}
          <span className="tl-dur mono">{d !== null ? formatMs(d) : ''}</span>
          <span className="tl-time mono">
            {t !== null && Number.isFinite(t) ? `+${formatMs(Math.max(0, t))}` : ''}
          </span>
        </>
      ) : (
        <span className="tl-loading">
          {cache.pageError(seq)?.message ??
            (cache.isMissing(seq) ? 'missing from the source (a seq gap)' : '')}
        </span>
      )}
    </div>
  );
});

/** Claude Code's Task / Agent tools run a subagent: its call is where it began. */
const SUBAGENT_TOOLS: ReadonlySet<string> = new Set(['Task', 'Agent']);

/**
 * Where a subagent began (the Task call) and ended (its result, which names the agent and links
 * to the subagent's own run; for a background agent, the notification of its end), so the parent's
 * timeline shows them without the conversation view.
 */
function SubagentMark({ ev }: { ev: StoredEvent }) {
  const p = ev.payload;
  // A run ProofLoop refereed (a real agent's): the host's events of a call a subagent made carry
  // the subagent's agent_id, named where the call was decided and invoked.
  const refereed = useApp((s) => s.runs?.find((r) => r.run_id === s.runId)?.format === 'proofloop');
  if (refereed && typeof p.agent_id === 'string')
    return ev.kind === 'tool_invoked' || ev.kind === 'action_denied' ? (
      <MadeBySubagent agentId={p.agent_id} />
    ) : null;
  if (ev.kind === 'model_proposed' && typeof p.tool === 'string' && SUBAGENT_TOOLS.has(p.tool))
    return (
      <span className="chip conv-subagent" data-testid="subagent-begin" title="this call starts a subagent">
        subagent begins
      </span>
    );
  // A background agent's call returns at once ("Async agent launched"); it ends at its notification.
  if (ev.kind === 'tool_returned' && typeof p.agent_id === 'string' && p.async_launched === true)
    return (
      <span
        className="chip conv-subagent"
        data-testid="subagent-launched"
        title="the subagent runs in the background"
      >
        subagent runs in the background
      </span>
    );
  if ((ev.kind === 'tool_returned' || ev.kind === 'subagent_ended') && typeof p.agent_id === 'string')
    return (
      <span data-testid="subagent-end">
        <SubagentLink agentId={p.agent_id} label={`subagent agent-${p.agent_id} ended`} />
      </span>
    );
  return null;
}

/** A call a real agent's subagent made, with a link to that subagent's imported transcript when listed. */
function MadeBySubagent({ agentId }: { agentId: string }) {
  const target = useApp((s) => s.runs?.find((r) => r.run_id.endsWith(`:agent-${agentId}`))?.run_id ?? null);
  // Short in the row (the summary beside it stays readable); the whole id is in the tooltip.
  const text = `subagent ${agentId.slice(0, 8)}`;
  return target ? (
    <button
      type="button"
      className="chip subagent-call link"
      data-testid="subagent-call"
      data-run-id={target}
      title={`made by subagent agent-${agentId}: open its transcript ${target}`}
      onClick={(e) => {
        e.stopPropagation();
        useApp.getState().selectRun(target);
      }}
    >
      ↳ {text}
    </button>
  ) : (
    <span
      className="chip subagent-call"
      data-testid="subagent-call"
      title={`made by subagent agent-${agentId} (its transcript is imported when the agent exits)`}
    >
      {text}
    </span>
  );
}
