import { useApp } from '../../store';

/** Progress of imports and jobs, from the 'job.progress' push. */
export function JobBar() {
  const jobs = useApp((s) => s.jobs);
  const list = Object.values(jobs);
  if (list.length === 0) return null;
  return (
    <div className="jobs">
      {list.map((j) => {
        const pct = j.total ? Math.min(100, (j.done / j.total) * 100) : null;
        return (
          <div
            key={j.job_id}
            className={`job${j.error ? ' failed' : ''}`}
            data-testid="job-progress"
            title={j.error ?? j.label}
          >
            <span className="job-label">{j.error ? `${j.label}: ${j.error}` : j.label}</span>
            <span
              className="job-bar"
              role="progressbar"
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={pct ?? undefined}
            >
              <span
                className={`job-fill${pct === null ? ' indeterminate' : ''}`}
                style={{ width: pct === null ? '40%' : `${pct}%` }}
              />
            </span>
          </div>
        );
      })}
    </div>
  );
}
