import { useEffect, useMemo, useState } from 'react';
import { available, call, callLoose } from '../../api/api';
import type { StoredEvent } from '../../api/types';
import { useApp } from '../../store';
import { JsonTree } from '../../ui/JsonTree';
import { KindIcon } from '../../ui/icons';
import { callIdOf, toneOf } from '../../ui/kinds';
import { ErrorBox } from '../../ui/ErrorBox';
import { currentCache, eventCache } from '../timeline/eventCache';
import { useEvent } from '../timeline/TimelineRow';
import { PatchView } from './PatchView';
import { ReadableView } from './ReadableView';
import { useHighlight } from './highlight';
import { ReadAsV1, SourceView } from './Provenance';
import { asV1 } from '../formats/readAs';
import { useRunFormat } from '../formats/useRunFormat';
import { findingsBySeq, WARNING_CODES } from '../timeline/TimelineRow';
import { runSummaryOf } from '../../store/runsSlice';
import { count } from '../../ui/numbers';

const CALL_ORDER = [
  'model_proposed',
  'action_allowed',
  'action_denied',
  'tool_invoked',
  'tool_returned',
  'tool_timed_out',
];
const ARTIFACT_METHODS = ['artifact.read'];

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = document.createElement('textarea');
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    const ok = document.execCommand('copy');
    ta.remove();
    return ok;
  }
}

interface Related {
  seq: number;
  kind: string;
}

/** The events of one call (proposal → decision → invocation → result), nearby ones first, then by search. */
function useRelated(stored: StoredEvent | undefined, fmt: string | null): Related[] {
  const ev = stored ? asV1(fmt, stored) : undefined;
  const callId = ev ? callIdOf(ev) : null;
  const runId = ev?.run_id;
  const seq = ev?.seq ?? 0;
  const near = useMemo(() => {
    if (!callId) return [];
    const cache = currentCache();
    return (cache?.around(seq) ?? [])
      .filter((e) => callIdOf(asV1(fmt, e)) === callId)
      .map((e) => ({ seq: e.seq, kind: e.kind }));
  }, [callId, seq, fmt]);
  // The whole call is usually on the loaded pages; only a call cut by them needs a search
  // (which scans the run: on a big one it holds the service for a while).
  const complete =
    near.some((r) => r.kind === 'model_proposed') &&
    near.some((r) => r.kind === 'tool_returned' || r.kind === 'tool_timed_out' || r.kind === 'action_denied');
  const [found, setFound] = useState<{ key: string; list: Related[] } | null>(null);
  const key = `${runId}/${callId}`;
  useEffect(() => {
    if (!callId || !runId || complete) return;
    let live = true;
    // Stepping fast should not search on every row: wait until the selection settles.
    const t = setTimeout(async () => {
      const r = await call('events.search', {
        run_id: runId,
        // Imported formats name the id their own way (tool_use_id, id): search the id itself.
        text: fmt ? JSON.stringify(callId) : `"call_id":${JSON.stringify(callId)}`,
        limit: 50,
      });
      if (!live || !r.ok) return;
      const cache = eventCache(runId, useApp.getState().head);
      const list: Related[] = [];
      for (const s of r.value.seqs.slice(0, 20)) {
        const e = await cache.fetch(s);
        if (e && callIdOf(asV1(fmt, e)) === callId) list.push({ seq: e.seq, kind: e.kind });
      }
      if (live) setFound({ key, list });
    }, 400);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [callId, runId, key, seq, complete, fmt]);
  return useMemo(() => {
    const all = new Map<number, Related>();
    for (const r of near) all.set(r.seq, r);
    if (found?.key === key) for (const r of found.list) all.set(r.seq, r);
    return [...all.values()].sort(
      (a, b) => a.seq - b.seq || CALL_ORDER.indexOf(a.kind) - CALL_ORDER.indexOf(b.kind),
    );
  }, [near, found, key]);
}

function digestsOf(payload: Record<string, unknown>): { field: string; digest: string }[] {
  const out: { field: string; digest: string }[] = [];
  for (const [k, v] of Object.entries(payload)) {
    if (typeof v === 'string' && /^(sha256:)?[0-9a-f]{64}$/.test(v) && /digest|after|before|artifact/.test(k))
      out.push({ field: k, digest: v });
  }
  return out;
}

/** `message.content[0].content`: a moved value's JSON path as people write it. */
export function pathText(path: readonly (string | number)[]): string {
  return (
    path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('') || '(payload)'
  );
}

/**
 * Values of an imported line too large for its event (electron/ingest/outline.ts): the payload
 * below holds their first bytes and a note; each is stored whole, redacted, as an artifact.
 */
function MovedValues({
  runId,
  moved,
}: {
  runId: string;
  moved: NonNullable<StoredEvent['source']>['artifacts'];
}) {
  if (!moved || moved.length === 0) return null;
  return (
    <div className="moved" data-testid="moved-values">
      <div className="dim">
        {moved.length === 1 ? 'One value was' : `${moved.length} values were`} too large for the event and
        moved to an artifact; the payload keeps the first bytes of each:
      </div>
      {moved.map((m) => (
        <Artifact
          key={pathText(m.path)}
          runId={runId}
          field={`${pathText(m.path)} (${count(m.bytes)} bytes)`}
          digest={m.digest}
        />
      ))}
    </div>
  );
}

function Artifact({ runId, field, digest }: { runId: string; field: string; digest: string }) {
  const method = ARTIFACT_METHODS.find(available);
  const [content, setContent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="artifact" data-testid="artifact">
      <span className="dim">{field}</span>{' '}
      <span className="mono">sha256:{digest.replace(/^sha256:/, '').slice(0, 16)}…</span>{' '}
      {method ? (
        <button
          type="button"
          className="btn small"
          onClick={async () => {
            const r = await callLoose<unknown>(method, { run_id: runId, digest });
            if (r.ok) {
              const v = r.value as { text?: string; truncated?: boolean };
              setContent(
                typeof v.text === 'string'
                  ? v.text + (v.truncated ? '\n…[truncated]' : '')
                  : JSON.stringify(r.value, null, 2),
              );
            } else setError(r.error.message);
          }}
        >
          Open
        </button>
      ) : (
        <span className="dim">(artifact viewer not available yet)</span>
      )}
      {error && <div className="bad-text">{error}</div>}
      {content !== null && <pre className="mono artifact-body">{content}</pre>}
    </div>
  );
}

export function PayloadView() {
  const runId = useApp((s) => s.runId);
  const seq = useApp((s) => s.viewSeq);
  const head = useApp((s) => s.head);
  const setSeq = useApp((s) => s.setSeq);
  const cache = useMemo(() => (runId ? eventCache(runId, head) : null), [runId, head]);
  const ev = useEvent(cache, seq);
  const fmt = useRunFormat();
  const related = useRelated(ev, fmt);
  const origin = useApp((s) => runSummaryOf(s, s.runId)?.origin ?? null);
  const warnings = useApp((s) => findingsBySeq(s.findings).get(seq));
  const [copied, setCopied] = useState(false);
  const searchText = useApp((s) => (s.searchHits?.run_id === s.runId ? s.searchHits.text : null));
  useHighlight('payload-view', searchText, [seq, ev]);

  if (!runId || seq < 1) return <div className="panel payload-panel" data-testid="payload-view" />;
  const pageError = cache?.pageError(seq);
  if (!ev)
    return (
      <div className="panel payload-panel" data-testid="payload-view" data-state="loading">
        {pageError ? (
          <ErrorBox error={pageError} what="Reading events" />
        ) : (
          <div className="loading">Loading seq {seq}…</div>
        )}
      </div>
    );
  const tone = toneOf(ev.kind);
  const payload = ev.payload as Record<string, unknown>;
  const v1 = asV1(fmt, ev).payload as Record<string, unknown>;
  const patch =
    ev.kind === 'file_changed' && typeof v1.patch === 'string' && v1.patch !== '' ? v1.patch : null;
  return (
    <div className="panel payload-panel" data-testid="payload-view" data-seq={ev.seq} data-kind={ev.kind}>
      <div className="panel-head">
        <span className={`tl-kind tone-${tone}`}>
          <KindIcon tone={tone} />
          <span className="mono" data-testid="payload-kind">
            {ev.kind}
          </span>
        </span>
        <span className="spacer" />
        <button
          type="button"
          className="btn small"
          data-testid="copy-payload"
          onClick={async () => {
            setCopied(await copyText(JSON.stringify(ev.payload, null, 2)));
            setTimeout(() => setCopied(false), 1200);
          }}
        >
          {copied ? 'Copied' : 'Copy JSON'}
        </button>
      </div>
      <dl className="envelope mono" data-testid="envelope">
        <dt>seq</dt>
        <dd data-testid="envelope-seq">{ev.seq}</dd>
        <dt>at</dt>
        <dd title={ev.at}>{ev.at.replace('T', ' ').replace('Z', '')}</dd>
        <dt>v</dt>
        <dd>{ev.v}</dd>
        <dt>hash</dt>
        <dd title={ev.hash}>{ev.hash ? `${ev.hash.slice(0, 12)}…` : '—'}</dd>
        {ev.redacted && (
          <>
            <dt>{ev.source?.artifacts ? 'stored' : 'redacted'}</dt>
            <dd data-testid="envelope-redacted">
              {ev.source?.artifacts
                ? 'with large values moved to artifacts (original digest kept)'
                : 'yes (original digest kept)'}
            </dd>
          </>
        )}
      </dl>
      {warnings && warnings.length > 0 && (
        <ul className="payload-findings" data-testid="payload-findings">
          {warnings.map((f, i) => (
            <li key={i} data-code={f.code}>
              <span className="badge bad">{f.code}</span> {f.message}
              {WARNING_CODES.has(f.code) && (
                <span className="dim"> — the payload below is stored as the file wrote it</span>
              )}
            </li>
          ))}
        </ul>
      )}
      {ev.source && <SourceView source={ev.source} file={origin} />}
      {related.length > 1 && (
        <div className="related" data-testid="related">
          <span className="dim">call {callIdOf(asV1(fmt, ev))}:</span>
          {related.map((r) => (
            <button
              key={r.seq}
              type="button"
              className={`related-link tone-${toneOf(r.kind)}${r.seq === ev.seq ? ' current' : ''}`}
              data-testid="related-link"
              data-seq={r.seq}
              onClick={() => setSeq(r.seq)}
              disabled={r.seq === ev.seq}
            >
              <KindIcon tone={toneOf(r.kind)} />
              <span className="mono">
                {r.kind} #{r.seq}
              </span>
            </button>
          ))}
        </div>
      )}
      {patch && <PatchView patch={patch} />}
      <MovedValues runId={runId} moved={ev.source?.artifacts} />
      {digestsOf(payload).map((d) => (
        <Artifact key={d.field} runId={runId} field={d.field} digest={d.digest} />
      ))}
      <ReadAsV1 ev={ev} fmt={fmt} />
      <ReadableView kind={asV1(fmt, ev).kind} payload={v1} skip={patch ? 'patch' : undefined} />
      <div className="payload-caption dim">
        {ev.source ? 'payload as stored (the source’s record)' : 'payload'}
      </div>
      <JsonTree value={ev.payload} openDepth={3} testId="payload-tree" />
    </div>
  );
}
