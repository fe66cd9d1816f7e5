/** A unified diff with added and removed lines coloured. */
export function PatchView({ patch }: { patch: string }) {
  const lines = patch.split('\n');
  return (
    <pre className="patch mono" data-testid="patch-view">
      {lines.map((l, i) => {
        const cls =
          l.startsWith('+++') || l.startsWith('---')
            ? 'p-file'
            : l.startsWith('@@')
              ? 'p-hunk'
              : l.startsWith('+')
                ? 'p-add'
                : l.startsWith('-')
                  ? 'p-del'
                  : 'p-ctx';
        return (
          <div key={i} className={cls} data-line-type={cls}>
            {l || ' '}
          </div>
        );
      })}
    </pre>
  );
}
