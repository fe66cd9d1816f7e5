import type { KindTone } from './kinds';

const PATHS: Record<KindTone, string> = {
  start: 'M3 2l7 4-7 4z',
  model: 'M2 3h8v5H5l-3 2z',
  allow: 'M2 6l3 3 5-6',
  deny: 'M3 3l6 6M9 3l-6 6',
  tool: 'M7 2a3 3 0 0 0-2 5L2 10l1 1 3-3a3 3 0 0 0 4-3L8 6 7 5l1-2z',
  error: 'M6 1l5 9H1zM6 5v2M6 8.5v.5',
  file: 'M3 1h4l2 2v8H3zM7 1v2h2',
  budget: 'M6 1a5 5 0 1 0 .01 0M6 3v3l2 2',
  judge: 'M2 10h8M6 10V3M3 4h6M3 4l-1 3h2zM9 4l-1 3h2z',
  end: 'M3 2v8M3 2h6l-1.5 2L9 6H3',
  note: 'M2 2h8v6H6l-2 2V8H2z',
  other: 'M6 3a3 3 0 1 0 .01 0',
};

const FILLED: ReadonlySet<KindTone> = new Set(['start']);

export function KindIcon({ tone }: { tone: KindTone }) {
  return (
    <svg className={`kind-icon tone-${tone}`} width="12" height="12" viewBox="0 0 12 12" aria-hidden="true">
      <path
        d={PATHS[tone]}
        fill={FILLED.has(tone) ? 'currentColor' : 'none'}
        stroke="currentColor"
        strokeWidth="1.3"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}
