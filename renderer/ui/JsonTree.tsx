import { memo, useState, type ReactNode } from 'react';
import { count } from './numbers';

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ID_KEYS = ['call_id', 'path', 'seq'] as const;
export const MAX_CHILDREN = 200;

/** The path syntax of shared/state/changes.ts: `a.b`, `a["x y"]`, `items[call_id=c1]`, `list[3]`. */
export function childPath(base: string, key: string | number, parent: unknown, child: unknown): string {
  if (Array.isArray(parent)) {
    if (child && typeof child === 'object' && !Array.isArray(child)) {
      const o = child as Record<string, unknown>;
      for (const k of ID_KEYS) {
        const v = o[k];
        if (typeof v === 'number' || typeof v === 'string') {
          const shown = typeof v === 'number' || /^[\w.:/@#-]+$/.test(v) ? String(v) : JSON.stringify(v);
          return `${base}[${k}=${shown}]`;
        }
      }
    }
    return `${base}[${key}]`;
  }
  const k = String(key);
  if (SIMPLE_KEY.test(k)) return base ? `${base}.${k}` : k;
  return `${base}[${JSON.stringify(k)}]`;
}

export interface Marks {
  /** Paths that changed exactly. */
  exact: ReadonlySet<string>;
  /** Ancestors of changed paths (shown with a dot so a collapsed branch still says it changed). */
  within: ReadonlySet<string>;
}

export function marksFor(paths: readonly string[]): Marks {
  const exact = new Set(paths);
  const within = new Set<string>();
  for (const p of paths) {
    for (let i = p.length - 1; i > 0; i--) {
      const c = p[i];
      if (c === '.' || c === '[') within.add(p.slice(0, i));
    }
  }
  return { exact, within };
}

const PLACEHOLDER = /\[REDACTED:[A-Za-z0-9_.:-]{1,100}#\d+\]/g;

/** A redaction, shown as what it is rather than as data: `[REDACTED:<rule>#<n>]` or a reduced text. */
function RedactedPill({ label, title }: { label: string; title: string }) {
  return (
    <span className="j-redacted" data-testid="redacted" title={title}>
      {label}
    </span>
  );
}

/** A long text the share profile left out, as `redactedObject` reads it. */
export interface RedactedObject {
  rule: string;
  length: number;
  sha256: string | null;
}

/** `{ redacted: "<rule>", length: n, sha256?: "…" }`: a long text the share profile left out. */
export function redactedObject(value: unknown): RedactedObject | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  if (typeof o.redacted !== 'string' || typeof o.length !== 'number') return null;
  for (const k of Object.keys(o)) if (k !== 'redacted' && k !== 'length' && k !== 'sha256') return null;
  if (o.sha256 !== undefined && typeof o.sha256 !== 'string') return null;
  return { rule: o.redacted, length: o.length, sha256: typeof o.sha256 === 'string' ? o.sha256 : null };
}

/** A long text the share profile left out (`redactedObject`): its rule, length and hash. */
export function RedactedText({ red }: { red: RedactedObject }) {
  return (
    <>
      <RedactedPill
        label={`[REDACTED:${red.rule}] ${count(red.length)} chars`}
        title={`text left out by rule ${red.rule}: ${red.length} characters${red.sha256 ? `, sha256 ${red.sha256}` : ''}`}
      />
      {red.sha256 && <span className="j-redacted-hash"> sha256:{red.sha256.slice(0, 12)}…</span>}
    </>
  );
}

function StringValue({ value }: { value: string }) {
  if (!value.includes('[REDACTED:')) return <span className="j-str">{JSON.stringify(value)}</span>;
  const parts: ReactNode[] = [];
  let last = 0;
  for (const m of value.matchAll(PLACEHOLDER)) {
    const at = m.index;
    if (at > last) parts.push(JSON.stringify(value.slice(last, at)).slice(1, -1));
    parts.push(
      <RedactedPill
        key={at}
        label={m[0]}
        title={`redacted by rule ${m[0].slice(10, m[0].indexOf('#'))}; the same value has the same placeholder`}
      />,
    );
    last = at + m[0].length;
  }
  if (parts.length === 0) return <span className="j-str">{JSON.stringify(value)}</span>;
  if (last < value.length) parts.push(JSON.stringify(value.slice(last)).slice(1, -1));
  return <span className="j-str">&quot;{parts}&quot;</span>;
}

export function Scalar({ value }: { value: unknown }) {
  if (value === null) return <span className="j-null">null</span>;
  switch (typeof value) {
    case 'string':
      return <StringValue value={value} />;
    case 'number':
      return <span className="j-num">{String(value)}</span>;
    case 'boolean':
      return <span className="j-bool">{String(value)}</span>;
    default:
      return <span className="j-null">{String(value)}</span>;
  }
}

interface NodeProps {
  name: string | number | null;
  value: unknown;
  path: string;
  depth: number;
  openDepth: number;
  marks: Marks | undefined;
}

const Node = memo(function Node({ name, value, path, depth, openDepth, marks }: NodeProps) {
  const isObj = value !== null && typeof value === 'object';
  const changed = marks?.exact.has(path) ?? false;
  const inside = marks?.within.has(path) ?? false;
  const [toggled, setToggled] = useState<boolean | null>(null);
  const open = toggled ?? (depth < openDepth || inside);
  const [limit, setLimit] = useState(MAX_CHILDREN);
  const label =
    name === null ? null : <span className={typeof name === 'number' ? 'j-index' : 'j-key'}>{name}</span>;
  const cls = `j-node${changed ? ' j-changed' : ''}${inside ? ' j-within' : ''}`;
  const red = isObj ? redactedObject(value) : null;
  if (red) {
    return (
      <div className={cls} data-path={path}>
        {label}
        {label && <span className="j-colon">: </span>}
        <RedactedText red={red} />
      </div>
    );
  }
  if (!isObj) {
    return (
      <div className={cls} data-path={path}>
        {label}
        {label && <span className="j-colon">: </span>}
        <Scalar value={value} />
      </div>
    );
  }
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value as Record<string, unknown>);
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  const shown = open ? entries.slice(0, limit) : [];
  const paths = shown.map(([k, v]) => childPath(path, k, value, v));
  // Items of a list that slides (the state keeps the newest N calls, context entries…) are keyed by
  // their id path, so a step removes one node and adds one instead of re-rendering every item.
  const byPath = Array.isArray(value) && new Set(paths).size === paths.length;
  return (
    <div className={cls} data-path={path}>
      <button type="button" className="j-toggle" onClick={() => setToggled(!open)} aria-expanded={open}>
        <span className="j-caret">{open ? '▾' : '▸'}</span>
        {label}
        {label && <span className="j-colon">: </span>}
        <span className="j-brace">{brackets[0]}</span>
        {!open && (
          <span className="j-summary">
            {entries.length === 0
              ? ''
              : Array.isArray(value)
                ? `${entries.length} items`
                : `${entries.length} keys`}
          </span>
        )}
        {!open && <span className="j-brace">{brackets[1]}</span>}
      </button>
      {open && (
        <div className="j-children">
          {shown.map(([k, v], i) => {
            const p = paths[i]!;
            // Only marked branches get the marks: the others keep equal props and skip rendering.
            const m = marks && (marks.exact.has(p) || marks.within.has(p)) ? marks : undefined;
            return (
              <Node
                key={byPath ? p : k}
                name={k}
                value={v}
                path={p}
                depth={depth + 1}
                openDepth={openDepth}
                marks={m}
              />
            );
          })}
          {entries.length > limit && (
            <button type="button" className="j-more" onClick={() => setLimit(limit + MAX_CHILDREN)}>
              show {Math.min(MAX_CHILDREN, entries.length - limit)} more of {entries.length - limit}
            </button>
          )}
        </div>
      )}
      {open && <span className="j-brace">{brackets[1]}</span>}
    </div>
  );
});

/** A collapsible JSON tree; `marks` highlights changed paths and the branches that hold them. */
export function JsonTree({
  value,
  openDepth = 2,
  marks,
  testId,
}: {
  value: unknown;
  openDepth?: number;
  marks?: Marks;
  testId?: string;
}) {
  return (
    <div className="json-tree mono" data-testid={testId}>
      <Node name={null} value={value} path="" depth={0} openDepth={openDepth} marks={marks} />
    </div>
  );
}
