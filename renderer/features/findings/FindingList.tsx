import { useState } from 'react';
import type { Finding } from '../../api/types';
import { useApp } from '../../store';
import { tail } from '../inspector/Provenance';
import { count } from '../../ui/numbers';

/** One finding: its code, where (seq, file:line), why, and for a line that is no event its text as written. */
export function FindingItem({ finding: f, onSeq }: { finding: Finding; onSeq?: (seq: number) => void }) {
  return (
    <li className="finding-item" data-testid="finding" data-code={f.code}>
      <div className="finding-head mono">
        <span className="badge bad">{f.code}</span>{' '}
        {f.seq !== null &&
          (onSeq ? (
            <button type="button" className="linklike mono" onClick={() => onSeq(f.seq!)}>
              seq {f.seq}
            </button>
          ) : (
            `seq ${f.seq}`
          ))}{' '}
        {f.file && (
          <span className="finding-where" title={`${f.file}${f.line ? `:${f.line}` : ''}`}>
            {tail(f.file, 48)}
            {f.line ? `:${f.line}` : ''}
          </span>
        )}
      </div>
      <div className="finding-message">{f.message}</div>
      {f.excerpt != null && f.excerpt !== '' && (
        <pre
          className="mono finding-excerpt"
          data-testid="finding-excerpt"
          title="the line as the file has it"
        >
          {f.excerpt}
        </pre>
      )}
    </li>
  );
}

export function FindingList({
  findings,
  onSeq,
}: {
  findings: readonly Finding[];
  onSeq?: (seq: number) => void;
}) {
  return (
    <ul className="findings" data-testid="findings">
      {findings.map((f, i) => (
        <FindingItem key={i} finding={f} onSeq={onSeq} />
      ))}
    </ul>
  );
}

/** Findings of files that made no run: shown above the runs list, else nothing says they were there. */
export function FolderFindings() {
  const ff = useApp((s) => s.folderFindings);
  const [open, setOpen] = useState(false);
  if (!ff) return null;
  return (
    <div className="folder-findings" data-testid="folder-findings">
      <button
        type="button"
        className="badge bad as-button"
        data-testid="folder-findings-toggle"
        aria-expanded={open}
        title="Problems in files of this folder that made no run"
        onClick={() => setOpen(!open)}
      >
        ⚠ {ff.total} file finding{ff.total === 1 ? '' : 's'} {open ? '▾' : '▸'}
      </button>
      {open && (
        <>
          <FindingList findings={ff.findings} />
          {ff.total > ff.findings.length && (
            <div className="dim">
              first {ff.findings.length} of {count(ff.total)}
            </div>
          )}
        </>
      )}
    </div>
  );
}
