import { useEffect, useMemo, useState } from 'react';
import { useApp } from '../../store';
import { previewKey, type BundlePreview, type BundleProfile } from '../../store/bundleSlice';
import { ErrorBox } from '../../ui/ErrorBox';
import { Modal } from '../../ui/Modal';
import { formatBytes } from './bundleMeta';
import { Findings, VerdictLines, verdictSummary } from './VerdictView';
import { count } from '../../ui/numbers';

const SEQ_LINKS = 120;

const PROFILES: { id: BundleProfile; label: string; hint: string }[] = [
  {
    id: 'share',
    label: 'Share',
    hint: 'credentials, e-mail addresses, home paths, long texts: for someone outside the team',
  },
  { id: 'credentials', label: 'Credentials only', hint: 'keys, tokens and passwords; everything else stays' },
];

function RunPicker({ chosen, onChange }: { chosen: string[]; onChange: (ids: string[]) => void }) {
  const runs = useApp((s) => s.runs);
  const [filter, setFilter] = useState('');
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const all = (runs ?? []).filter(
      (r) => !f || r.run_id.toLowerCase().includes(f) || r.task_id?.toLowerCase().includes(f),
    );
    // The chosen ones first, in the order they were chosen.
    const rank = (id: string) => {
      const i = chosen.indexOf(id);
      return i < 0 ? Number.MAX_SAFE_INTEGER : i;
    };
    return all.sort((a, b) => rank(a.run_id) - rank(b.run_id));
  }, [runs, filter, chosen]);
  return (
    <div className="export-runs">
      {(runs?.length ?? 0) > 6 && (
        <input
          className="input small"
          placeholder="Find runs to add…"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          aria-label="Find runs"
        />
      )}
      <ul className="export-run-list" data-testid="export-runs">
        {shown.map((r) => {
          const on = chosen.includes(r.run_id);
          return (
            <li key={r.run_id}>
              <label className={on ? 'on' : ''}>
                <input
                  type="checkbox"
                  checked={on}
                  data-testid="export-run"
                  data-run-id={r.run_id}
                  onChange={() => onChange(on ? chosen.filter((x) => x !== r.run_id) : [...chosen, r.run_id])}
                />
                <span className="mono run-id">{r.run_id}</span>
                {r.source !== 'executed' && <span className={`src src-${r.source}`}>{r.source}</span>}
                <span className="spacer" />
                <span className="dim mono">{count(r.event_count)} ev</span>
              </label>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function Preview({
  preview,
  onSeq,
}: {
  preview: BundlePreview;
  onSeq: (runId: string, seq: number) => void;
}) {
  const rules = Object.entries(preview.rules).sort((a, b) => b[1] - a[1]);
  return (
    <div className="export-preview" data-testid="export-preview">
      <div className="section-title">What will be redacted</div>
      {rules.length === 0 ? (
        <p className="dim" data-testid="preview-nothing">
          {preview.events_redacted > 0
            ? // A run opened from a bundle: its events were redacted before, and go out as they are
              // (the counts below are those events, not new replacements).
              `Nothing more matches the ${preview.profile} profile: ${count(preview.events_redacted)} event${preview.events_redacted === 1 ? ' was' : 's were'} already redacted and go out as they are.`
            : `Nothing matches the ${preview.profile} profile: the events go out as they are.`}
        </p>
      ) : (
        <>
          <p>
            <b data-testid="preview-events">{count(preview.events_redacted)}</b> event
            {preview.events_redacted === 1 ? '' : 's'} redacted; replacements per rule (never the values):
          </p>
          <div className="preview-rules">
            {rules.map(([rule, n]) => (
              <span key={rule} className="preview-rule" data-testid="preview-rule" data-rule={rule}>
                <span className="mono">{rule}</span> <b>{count(n)}</b>
              </span>
            ))}
          </div>
        </>
      )}
      {preview.runs.map((r) => (
        <div key={r.run_id} className="preview-run" data-testid="preview-run" data-run-id={r.run_id}>
          <div>
            <span className="mono">{r.run_id}</span>{' '}
            <span className="dim">
              {count(r.redacted_events)} of {count(r.events)} events
              {Object.keys(r.rules).length > 0 &&
                ` · ${Object.entries(r.rules)
                  .map(([k, n]) => `${k} ${n}`)
                  .join(', ')}`}
            </span>
          </div>
          {r.seqs.length > 0 && (
            <div className="preview-seqs">
              <span className="dim">seqs:</span>
              {r.seqs.slice(0, SEQ_LINKS).map((s) => (
                <button
                  key={s}
                  type="button"
                  className="linklike mono"
                  data-testid="preview-seq"
                  data-run-id={r.run_id}
                  data-seq={s}
                  title={`Show seq ${s} in the timeline`}
                  onClick={() => onSeq(r.run_id, s)}
                >
                  {s}
                </button>
              ))}
              {(r.seqs.length > SEQ_LINKS || r.seqs_truncated) && (
                <span className="dim">
                  … and {r.seqs_truncated ? 'more' : count(r.seqs.length - SEQ_LINKS) + ' more'}
                </span>
              )}
            </div>
          )}
        </div>
      ))}
    </div>
  );
}

function Result() {
  const res = useApp((s) => s.exportResult.value);
  const verdict = useApp((s) => s.exportVerdict);
  const verify = useApp((s) => s.verifyExport);
  const out = useApp((s) => s.exportDraft?.out ?? '');
  const openOpen = useApp((s) => s.openOpenBundleDialog);
  const discard = useApp((s) => s.discardExport);
  if (!res) return null;
  const m = res.manifest;
  return (
    <div className="export-result" data-testid="export-result">
      <div className="section-title">Written</div>
      <dl className="kv mono">
        <dt>file</dt>
        <dd data-testid="export-file">{res.file}</dd>
        <dt>size</dt>
        <dd data-testid="export-size">{formatBytes(res.bytes)}</dd>
        <dt>sha256</dt>
        <dd data-testid="export-sha256" className="wrap">
          {res.sha256}
        </dd>
        <dt>signed</dt>
        <dd data-testid="export-signed">{m.signed ? `yes, key ${m.signer ?? ''}` : 'no'}</dd>
        <dt>redacted</dt>
        <dd>
          {m.events_redacted} events ({m.profile} profile), {m.runs.length} run
          {m.runs.length === 1 ? '' : 's'}
        </dd>
      </dl>
      <div className="row-gap">
        <button
          type="button"
          className="btn"
          data-testid="verify-bundle"
          disabled={verdict.busy}
          onClick={() => void verify()}
        >
          {verdict.busy ? 'Verifying…' : '✓ Verify'}
        </button>
        <button
          type="button"
          className="btn"
          data-testid="open-exported"
          onClick={() => {
            // The export is done: leave it for the bundle it wrote.
            discard();
            openOpen(out.trim());
          }}
        >
          Open this bundle…
        </button>
      </div>
      {verdict.error && <ErrorBox error={verdict.error} what="Verifying the bundle" />}
      {verdict.value && (
        <div className="export-verdict" data-testid="export-verdict" data-ok={verdict.value.ok}>
          <b>{verdictSummary(verdict.value)}</b>
          <VerdictLines verdict={verdict.value} />
          <Findings findings={verdict.value.findings} />
        </div>
      )}
    </div>
  );
}

/** Export a redacted audit bundle: choose runs, profile, signing and a file; preview; write; verify. */
export function ExportDialog() {
  const draft = useApp((s) => s.exportDraft);
  const preview = useApp((s) => s.exportPreview);
  const result = useApp((s) => s.exportResult);
  const update = useApp((s) => s.updateExportDraft);
  const loadPreview = useApp((s) => s.loadExportPreview);
  const runExport = useApp((s) => s.runExport);
  const discard = useApp((s) => s.discardExport);
  const showSeq = useApp((s) => s.showSeqFromExport);
  const folder = useApp((s) => s.folder?.folder ?? '');
  const key = draft ? previewKey(draft) : '';

  useEffect(() => {
    if (!key || useApp.getState().exportPreview.key === key) return;
    const t = setTimeout(() => void loadPreview(), 150);
    return () => clearTimeout(t);
  }, [key, loadPreview]);

  if (!draft) return null;
  const previewReady = preview.key === key && !preview.busy;
  const exists = result.error?.code === 'conflict';
  const canExport =
    draft.runIds.length > 0 && draft.out.trim().length > 0 && previewReady && !result.busy && !result.value;

  return (
    <Modal
      title="Export audit bundle"
      label="Export bundle"
      testId="export-dialog"
      className="export-dialog"
      onClose={discard}
      closeOnBackdrop={false}
    >
      <form
        className="task-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (canExport) void runExport();
        }}
      >
        <div className="export-grid">
          <div>
            <div className="section-title">Runs ({draft.runIds.length} chosen)</div>
            <RunPicker chosen={draft.runIds} onChange={(runIds) => update({ runIds })} />
          </div>
          <div>
            <div className="section-title">Profile</div>
            {PROFILES.map((p) => (
              <label key={p.id} className="radio">
                <span>
                  <input
                    type="radio"
                    name="profile"
                    value={p.id}
                    checked={draft.profile === p.id}
                    data-testid={`profile-${p.id}`}
                    onChange={() => update({ profile: p.id })}
                  />{' '}
                  <b>{p.label}</b>
                  {p.id === 'share' && <span className="dim"> (default)</span>}
                </span>
                <span className="dim hint">{p.hint}</span>
              </label>
            ))}
            <label className="radio">
              <span>
                <input
                  type="checkbox"
                  checked={draft.sign}
                  data-testid="export-sign"
                  onChange={(e) => update({ sign: e.target.checked })}
                />{' '}
                <b>Sign</b> with my key
              </span>
              <span className="dim hint">
                seals event counts and heads, so a reviewer can prove nothing was cut off
              </span>
            </label>
            <label>
              File (inside the open folder)
              <input
                className="input mono"
                value={draft.out}
                onChange={(e) => update({ out: e.target.value, force: false })}
                data-testid="export-out"
                spellCheck={false}
                placeholder="name.bundle.zip"
              />
              <span className="dim hint mono" title={folder}>
                in {folder}
              </span>
            </label>
          </div>
        </div>
        {draft.runIds.length === 0 && <p className="dim">Choose at least one run.</p>}
        {preview.key === key && preview.busy && !preview.value && (
          <div className="loading">Checking what would be redacted…</div>
        )}
        {preview.key === key && preview.error && (
          <ErrorBox
            error={preview.error}
            what="Previewing the redaction"
            onRetry={() => void loadPreview()}
          />
        )}
        {preview.value && draft.runIds.length > 0 && (
          <div className={preview.key === key && !preview.busy ? '' : 'stale'}>
            <Preview preview={preview.value} onSeq={showSeq} />
          </div>
        )}
        {result.error && <ErrorBox error={result.error} what="Writing the bundle" />}
        {(exists || draft.force) && (
          <label className="radio">
            <span>
              <input
                type="checkbox"
                checked={draft.force}
                data-testid="export-force"
                onChange={(e) => update({ force: e.target.checked })}
              />{' '}
              Replace the existing file
            </span>
          </label>
        )}
        {!result.value && (
          <div className="row-gap">
            <button type="submit" className="btn primary" disabled={!canExport} data-testid="export-submit">
              {result.busy ? 'Writing…' : 'Export'}
            </button>
            <button type="button" className="btn" onClick={discard}>
              Cancel
            </button>
          </div>
        )}
      </form>
      <Result />
    </Modal>
  );
}

/** While the export dialog is put aside to look at a seq: the way back to it. */
export function ExportResumePill() {
  const draft = useApp((s) => s.exportDraft);
  const aside = useApp((s) => s.exportAside);
  const overlay = useApp((s) => s.overlay);
  const resume = useApp((s) => s.resumeExport);
  const discard = useApp((s) => s.discardExport);
  if (!draft || !aside || overlay === 'export-bundle') return null;
  return (
    <div className="resume-pill" data-testid="export-resume">
      <button type="button" className="btn small primary" onClick={resume}>
        ◂ Back to export ({draft.runIds.length} run{draft.runIds.length === 1 ? '' : 's'})
      </button>
      <button type="button" className="btn small ghost" onClick={discard} aria-label="Discard export">
        ✕
      </button>
    </div>
  );
}
