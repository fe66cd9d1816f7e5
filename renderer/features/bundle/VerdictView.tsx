import {
  completenessText,
  integrityText,
  signatureText,
  verdictTone,
  type Tone,
  type VerdictLike,
} from './bundleMeta';

const toneOfAspect = {
  integrity: (v: VerdictLike['integrity']): Tone => (v === 'ok' ? 'ok' : 'bad'),
  completeness: (v: VerdictLike['completeness']): Tone =>
    v === 'ok' ? 'ok' : v === 'failed' ? 'bad' : 'warn',
  signature: (v: VerdictLike['signature']): Tone => (v === 'valid' ? 'ok' : v === 'invalid' ? 'bad' : 'warn'),
};

/**
 * The three verdicts of a bundle check, apart: integrity, completeness, signature; then the first
 * failure. `onSeq` makes a failure's seq a link when it belongs to a run shown here.
 */
export function VerdictLines({
  verdict,
  onSeq,
}: {
  verdict: VerdictLike;
  onSeq?: (runId: string | null, seq: number) => (() => void) | null;
}) {
  const ff = verdict.first_failure;
  const jump = ff && ff.seq !== null && onSeq ? onSeq(ff.run_id, ff.seq) : null;
  return (
    <dl className="verdict-lines">
      <dt>Integrity</dt>
      <dd data-testid="verdict-integrity" data-value={verdict.integrity}>
        <span className={`badge ${toneOfAspect.integrity(verdict.integrity)}`}>{verdict.integrity}</span>{' '}
        <span className="dim">{integrityText(verdict.integrity).replace(/^\w+ — /, '')}</span>
      </dd>
      <dt>Completeness</dt>
      <dd data-testid="verdict-completeness" data-value={verdict.completeness}>
        <span className={`badge ${toneOfAspect.completeness(verdict.completeness)}`}>
          {verdict.completeness}
        </span>{' '}
        <span className="dim">
          {completenessText(verdict.completeness, verdict.signature).replace(/^\w+ — /, '')}
        </span>
      </dd>
      <dt>Signature</dt>
      <dd data-testid="verdict-signature" data-value={verdict.signature}>
        <span className={`badge ${toneOfAspect.signature(verdict.signature)}`}>
          {verdict.signature.replace('_', ' ')}
        </span>{' '}
        <span className="dim">{signatureText(verdict.signature).replace(/^[\w ]+ — /, '')}</span>
        {verdict.signer && (
          <span className="dim mono" title={verdict.signer.fingerprint}>
            {' '}
            · signer {verdict.signer.fingerprint.replace(/^sha256:/, '').slice(0, 16)}…
            {verdict.signer.pinned ? ' (trusted)' : ' (not pinned)'}
          </span>
        )}
      </dd>
      {ff && (
        <>
          <dt>First failure</dt>
          <dd data-testid="verdict-first-failure">
            {ff.run_id && <span className="mono">run {ff.run_id} </span>}
            {ff.seq !== null &&
              (jump ? (
                <button type="button" className="linklike mono" onClick={jump} data-testid="failure-seq">
                  seq {ff.seq}
                </button>
              ) : (
                <span className="mono">seq {ff.seq}</span>
              ))}{' '}
            — {ff.reason}
          </dd>
        </>
      )}
    </dl>
  );
}

export function verdictSummary(v: VerdictLike): string {
  const tone = verdictTone(v);
  if (tone === 'ok') return 'Verified: intact, complete and signed';
  if (tone === 'bad')
    return v.integrity === 'failed'
      ? 'Verification failed: the bundle was altered'
      : v.completeness === 'failed'
        ? 'Verification failed: events are missing'
        : 'Verification failed: the signature does not match';
  return 'Intact, but completeness is not proven';
}

export function Findings({ findings }: { findings: VerdictLike['findings'] }) {
  if (findings.length === 0) return null;
  return (
    <ul className="findings bundle-findings" data-testid="bundle-findings">
      {findings.map((f, i) => (
        <li key={i} className="mono">
          <span className={`badge ${f.aspect === 'note' ? 'warn' : 'bad'}`}>{f.code}</span>{' '}
          {f.run_id ? `${f.run_id} ` : ''}
          {f.seq !== null ? `seq ${f.seq} ` : ''}— {f.message}
        </li>
      ))}
    </ul>
  );
}
