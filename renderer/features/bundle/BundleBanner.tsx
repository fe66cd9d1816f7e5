import { useState } from 'react';
import type { RunSummary } from '../../api/types';
import { useApp } from '../../store';
import { bundleMetaOf, verdictTone, type BundleMeta } from './bundleMeta';
import { Findings, VerdictLines, verdictSummary } from './VerdictView';

const basename = (p: string) => p.split(/[\\/]/).pop() ?? p;

/** Top of a bundle run's view: where it came from and what verifying the bundle found. */
export function BundleBanner({ run }: { run: RunSummary }) {
  const meta = bundleMetaOf(run);
  const setSeq = useApp((s) => s.setSeq);
  const [details, setDetails] = useState(false);
  if (!meta) {
    return (
      <div className="bundle-banner bad" data-testid="bundle-banner" data-tone="bad">
        <div className="bundle-banner-title">
          Opened from a bundle, but its verification result is missing: treat it as unverified.
        </div>
      </div>
    );
  }
  const v = meta.verdict;
  const tone = verdictTone(v);
  // A failure's run id is the id inside the bundle; here the run may carry a suffix.
  const ownSeq = (runId: string | null, seq: number) =>
    runId === null || runId === meta.run_id || runId === run.run_id ? () => setSeq(seq) : null;
  return (
    <div className={`bundle-banner ${tone}`} data-testid="bundle-banner" data-tone={tone} role="status">
      <div className="bundle-banner-title">
        <span className="bundle-banner-icon" aria-hidden="true">
          {tone === 'ok' ? '✔' : tone === 'bad' ? '✖' : '!'}
        </span>
        <b>{verdictSummary(v)}</b>
        <span className="dim">
          · from{' '}
          <span className="mono" title={meta.file}>
            {basename(meta.file)}
          </span>
          {meta.profile && <> · profile {meta.profile}</>}
          {meta.created_at && <> · exported {meta.created_at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')}</>}
          {meta.renamed_from && (
            <>
              {' '}
              · id in bundle <span className="mono">{meta.renamed_from}</span>
            </>
          )}{' '}
          · read-only
        </span>
        <span className="spacer" />
        <button
          type="button"
          className="btn small ghost"
          onClick={() => setDetails(!details)}
          aria-expanded={details}
          data-testid="bundle-banner-details"
        >
          {details ? 'Less ▾' : 'Details ▸'}
        </button>
      </div>
      <VerdictLines verdict={v} onSeq={ownSeq} />
      <ChainOrigin meta={meta} />
      {details && (
        <div className="bundle-banner-more">
          <div className="mono dim">
            {meta.file} · sha256 {meta.sha256}
          </div>
          <Findings findings={v.findings} />
        </div>
      )}
    </div>
  );
}

/** Where this run's chain comes from: its writer's (since written) or ProofLoop's import (since import). */
function ChainOrigin({ meta }: { meta: BundleMeta }) {
  if (meta.chain !== 'import')
    return (
      <div className="dim" data-testid="bundle-chain" data-value="source">
        Chain: the run&apos;s own, as its writer chained it — integrity since it was written.
      </div>
    );
  return (
    <div className="dim" data-testid="bundle-chain" data-value="import">
      Chain: sealed by ProofLoop when it imported an unchained source — integrity since import.
      {meta.seal?.ranges.map((s) => (
        <div key={`${s.from}-${s.to}`} className="mono">
          seal: {meta.seal!.file} bytes {s.from}–{s.to} sha256 {s.sha256}
        </div>
      ))}
    </div>
  );
}
