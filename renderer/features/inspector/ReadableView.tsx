import { lazy, Suspense, useMemo, useState, type ReactNode } from 'react';
import { JsonTree } from '../../ui/JsonTree';
import { PatchView } from './PatchView';
import { jsonInString, readableBlocks, type Block, type BlockKind } from './readable';

const PLACEHOLDER = /\[REDACTED:[A-Za-z0-9_.:-]{1,100}#\d+\]/g;

/** A text with its line breaks, a redaction placeholder shown as one. */
function PlainText({ text }: { text: string }) {
  const parts: ReactNode[] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(
      <span key={m.index} className="j-redacted" data-testid="redacted">
        {m[0]}
      </span>,
    );
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  return (
    <pre className="readable-text" data-testid="readable-text">
      {parts}
    </pre>
  );
}

/** The Markdown renderer once its chunk has loaded: drawn at once then, without suspending. */
let markdownText: ((p: { text: string }) => ReactNode) | null = null;
const loadMarkdown = () =>
  import('./MarkdownText').then((m) => {
    markdownText = m.default;
    return m;
  });
const LazyMarkdownText = lazy(loadMarkdown);

/**
 * Loads the Markdown renderer once the page has been quiet for a while (PRELOAD_AFTER_MS, then an
 * idle moment): a run opened later shows its Markdown at once. Not at once when the list is
 * drawn: its module (marked builds its rules as it loads, ~15 ms here) then ran just as a quick
 * first click came, and delayed it (clickgap probe, 10 alternating cold starts: list to press 96
 * against 77 ms). A run opened before it is loaded shows its text with its lines for the moment
 * it takes to load (MarkdownBlock).
 */
const PRELOAD_AFTER_MS = 500;
export function preloadMarkdown(): () => void {
  let idle: number | null = null;
  const timer = setTimeout(() => {
    // A preload that fails (the server gone) is no error of the page's: a Markdown block asks again.
    idle = requestIdleCallback(() => void loadMarkdown().catch(() => undefined), { timeout: 2000 });
  }, PRELOAD_AFTER_MS);
  return () => {
    clearTimeout(timer);
    if (idle !== null) cancelIdleCallback(idle);
  };
}

/** Markdown rendered: at once when its renderer is loaded, else its text with its lines until it is. */
function MarkdownBlock({ text }: { text: string }) {
  // React.lazy suspends on its first render even when the chunk is already there: one more commit
  // (and the payload's layout again) on the click that opens a run.
  const Loaded = markdownText;
  if (Loaded) return <Loaded text={text} />;
  return (
    <Suspense fallback={<PlainText text={text} />}>
      <LazyMarkdownText text={text} />
    </Suspense>
  );
}

type Mode = BlockKind | 'raw';

function modesOf(b: Block): Mode[] {
  switch (b.kind) {
    case 'markdown':
      return ['markdown', 'text', 'raw'];
    case 'json':
      return ['json', 'text', 'raw'];
    case 'patch':
      return ['patch', 'text', 'raw'];
    case 'command':
      return ['command', 'raw'];
    case 'text':
      return ['text', 'raw'];
  }
}

const MODE_LABEL: Record<Mode, string> = {
  markdown: 'Markdown',
  text: 'Text',
  json: 'JSON',
  patch: 'Patch',
  command: 'Command',
  raw: 'Raw',
};

function ReadableBlock({ block }: { block: Block }) {
  const modes = modesOf(block);
  // JSON kept in a string is shown as the string first; its tree is one click away.
  const [mode, setMode] = useState<Mode>(block.kind === 'json' ? 'text' : modes[0]!);
  return (
    <div
      className="readable-block"
      data-testid="readable-block"
      data-path={block.path}
      data-kind={block.kind}
    >
      <div className="readable-head">
        <span className="mono dim">{block.path}</span>
        <span className="spacer" />
        {modes.map((m) => (
          <button
            key={m}
            type="button"
            className={`btn tiny${m === mode ? ' on' : ''}`}
            aria-pressed={m === mode}
            data-testid={`readable-mode-${m}`}
            onClick={() => setMode(m)}
          >
            {MODE_LABEL[m]}
          </button>
        ))}
      </div>
      {mode === 'markdown' && (
        <div className="readable-md" data-testid="readable-markdown">
          <MarkdownBlock text={block.text} />
        </div>
      )}
      {mode === 'text' && <PlainText text={block.text} />}
      {mode === 'json' && <JsonTree value={jsonInString(block.text)} openDepth={3} testId="readable-json" />}
      {mode === 'patch' && <PatchView patch={block.text} />}
      {mode === 'command' && (
        <pre className="readable-command" data-testid="readable-command">
          <span className="dim">$ </span>
          {block.text}
        </pre>
      )}
      {mode === 'raw' && (
        <pre className="readable-raw mono" data-testid="readable-raw">
          {JSON.stringify(block.text)}
        </pre>
      )}
    </div>
  );
}

/**
 * The payload for reading, above its raw tree: the call's tool, its command or patch, texts with
 * their lines, Markdown rendered, JSON in strings on request; each block's raw form one click away.
 */
export function ReadableView({
  kind,
  payload,
  skip,
}: {
  kind: string;
  payload: Record<string, unknown>;
  /** A path shown already (a file_changed's patch). */
  skip?: string;
}) {
  const blocks = useMemo(
    () => readableBlocks(kind, payload).filter((b) => b.path !== skip),
    [kind, payload, skip],
  );
  const tool = typeof payload.tool === 'string' ? payload.tool : null;
  if (blocks.length === 0) return null;
  return (
    <div className="readable" data-testid="readable">
      {tool && (
        <div className="readable-tool mono" data-testid="readable-tool">
          {tool}
        </div>
      )}
      {blocks.map((b) => (
        <ReadableBlock key={`${b.path}\u0000${b.kind}`} block={b} />
      ))}
    </div>
  );
}
