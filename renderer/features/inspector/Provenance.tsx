import type { StoredEvent } from '../../api/types';
import { readAs } from '../formats/readAs';

type Obj = Record<string, unknown>;

const VALUE_CHARS = 160;

/** A long path's end, where its file name is (the whole path is the title). */
export function tail(path: string, n = 64): string {
  return path.length > n ? `…${path.slice(-(n - 1))}` : path;
}

function short(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > VALUE_CHARS ? `${s.slice(0, VALUE_CHARS - 1)}…` : s;
}

/** Where an imported event came from: the run's source file, the line, the part of it, the source's ids. */
export function SourceView({
  source,
  file,
}: {
  source: NonNullable<StoredEvent['source']>;
  file: string | null;
}) {
  const ids = Object.entries(source.ids ?? {});
  return (
    <dl className="provenance mono" data-testid="provenance">
      <dt>file</dt>
      <dd data-testid="provenance-file" title={file ?? ''}>
        {file ? tail(file) : '—'}
      </dd>
      <dt>line</dt>
      <dd data-testid="provenance-line">
        {source.line}
        {source.part !== undefined && <span className="dim"> · part {source.part}</span>}
      </dd>
      {ids.map(([k, v]) => (
        <div key={k} className="provenance-id" data-testid="provenance-id" data-id={k}>
          <dt>{k}</dt>
          <dd title={v}>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * The v1 reading of an imported payload (what the projection folds), field by field, naming the
 * fields the format's view inferred: values the file never held.
 */
export function ReadAsV1({ ev, fmt }: { ev: StoredEvent; fmt: string | null }) {
  const r = readAs(fmt, ev);
  // A view that reads the payload as it is (an unknown line, a v1 event) has nothing to add.
  if (!r || (r.payload === ev.payload && r.inferred.length === 0)) return null;
  const inferred = new Set(r.inferred);
  const entries = Object.entries(r.payload as Obj);
  return (
    <details className="read-as" data-testid="read-as-v1" open={r.inferred.length > 0}>
      <summary>
        read as v1 <span className="mono">{ev.kind}</span>
        {r.inferred.length > 0 ? (
          <span className="dim">
            {' '}
            · inferred: <span data-testid="inferred-fields">{r.inferred.join(', ')}</span>
          </span>
        ) : (
          <span className="dim"> · nothing inferred</span>
        )}
      </summary>
      <table className="read-as-fields mono">
        <tbody>
          {entries.map(([k, v]) => (
            <tr
              key={k}
              className={inferred.has(k) ? 'inferred' : ''}
              data-testid="v1-field"
              data-field={k}
              data-inferred={inferred.has(k) ? 'true' : 'false'}
            >
              <th>{k}</th>
              <td title={inferred.has(k) ? 'not in the file: the view filled it in' : 'read from the file'}>
                {short(v)}
                {inferred.has(k) && <span className="badge warn">inferred</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
