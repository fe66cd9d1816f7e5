import type { UiError } from '../api/api';

const ADVICE: Record<string, string> = {
  unavailable: 'This part of ProofLoop is still being built; the rest of the app works.',
  not_found: 'It may have been removed or the folder changed: reload the runs list.',
  unauthorized: 'Open the URL printed by `proofloop serve` (it carries the token).',
  io: 'Is ProofLoop still running? Restart `proofloop serve` and reload.',
  bad_args: 'The request was refused; this is likely a bug, please report it.',
  conflict: 'Another writer holds this run; wait for it to finish.',
  internal: 'ProofLoop hit an internal error; see its log.',
};

/** An API error as the user should see it: what failed, the message, and what to do. */
export function ErrorBox({ error, what, onRetry }: { error: UiError; what: string; onRetry?: () => void }) {
  const tone = error.code === 'unavailable' ? 'notice' : 'error';
  return (
    <div
      className={`errorbox ${tone}`}
      role={tone === 'error' ? 'alert' : 'status'}
      data-testid={tone === 'error' ? 'error' : 'unavailable'}
    >
      <div className="errorbox-title">
        {what} {tone === 'error' ? 'failed' : 'is not available'}
        <span className="code mono">{error.code}</span>
      </div>
      <div className="errorbox-msg">{error.message}</div>
      <div className="errorbox-advice">
        {ADVICE[error.code] ?? 'Try again; if it persists, see the ProofLoop log.'}
      </div>
      {onRetry && (
        <button type="button" className="btn small" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
