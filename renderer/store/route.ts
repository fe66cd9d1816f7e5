/** What the URL hash says: the selected run and seq, or a diff, so both survive a reload. */
export type Route =
  | { view: 'home' }
  | { view: 'run'; runId: string; seq: number | null }
  | { view: 'diff'; left: string; right: string };

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'run' && parts[1]) {
    const seq = parts[2] === 'seq' && parts[3] ? Number(parts[3]) : null;
    return {
      view: 'run',
      runId: parts[1],
      seq: seq !== null && Number.isInteger(seq) && seq > 0 ? seq : null,
    };
  }
  if (parts[0] === 'diff' && parts[1] && parts[2]) return { view: 'diff', left: parts[1], right: parts[2] };
  return { view: 'home' };
}

export function formatHash(route: Route): string {
  switch (route.view) {
    case 'home':
      return '#/';
    case 'run':
      return `#/run/${encodeURIComponent(route.runId)}${route.seq ? `/seq/${route.seq}` : ''}`;
    case 'diff':
      return `#/diff/${encodeURIComponent(route.left)}/${encodeURIComponent(route.right)}`;
  }
}
