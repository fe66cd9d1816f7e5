import { memo, useEffect, useLayoutEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { flowRows, sizesAfterLayout } from '../../ui/virtual';
import { useApp } from '../../store';
import { setStepHint } from '../../store/inspectorSlice';
import { eventCache } from '../timeline/eventCache';
import { PatchView } from '../inspector/PatchView';
import { useRunFormat } from '../formats/useRunFormat';
import type { ConvItem } from './items';
import { parentSessionOf } from './items';
import { SubagentLink } from './SubagentLink';
import { ConversationModel, type ItemRow, type PageRow } from './model';

let current: ConversationModel | null = null;

/** The model of the selected run (one at a time, like the event cache it reads). */
export function conversationModel(runId: string, fmt: string | null, head: number): ConversationModel {
  const cache = eventCache(runId, head);
  if (!current || current.runId !== runId || current.fmt !== fmt) {
    current?.dispose();
    current = new ConversationModel(runId, fmt, cache, head);
  } else current.grow(head);
  return current;
}

export function currentConversation(): ConversationModel | null {
  return current;
}

/** ←/→ in the conversation: the next seq it shows (a prompt, a text, a call, its result…). */
export async function stepConversation(delta: 1 | -1): Promise<void> {
  const s = useApp.getState();
  const m = current;
  if (!m || m.runId !== s.runId) return s.step(delta);
  const runId = s.runId;
  const next = await m.stepFrom(s.seq, delta);
  if (next !== null && useApp.getState().runId === runId) useApp.getState().setSeq(next);
}

const ESTIMATE: Record<string, number> = {
  prompt: 64,
  text: 90,
  thinking: 34,
  call: 110,
  result: 70,
  file: 120,
  note: 28,
};

function Text({ text, className }: { text: string; className?: string }) {
  return (
    <div className={`conv-text${className ? ` ${className}` : ''}`}>
      {text.trim() ? text : <span className="dim">(empty)</span>}
    </div>
  );
}

function SelectSeq({
  seq,
  children,
  className,
}: {
  seq: number;
  children: React.ReactNode;
  className?: string;
}) {
  const selected = useApp((s) => s.viewSeq === seq);
  return (
    <div
      className={`conv-part${selected ? ' selected' : ''}${className ? ` ${className}` : ''}`}
      data-seq={seq}
      onClick={(e) => {
        e.stopPropagation();
        useApp.getState().setSeq(seq);
      }}
    >
      {children}
    </div>
  );
}

function Result({ item }: { item: ConvItem }) {
  return (
    <SelectSeq seq={item.seq} className={`conv-result tone-${item.tone}`}>
      <div className="conv-label" data-testid="conv-result" data-status={item.status}>
        {item.status === 'ok' || item.status === 'success' ? '✓' : '✗'} result{' '}
        <span className="mono dim">#{item.seq}</span>
        {item.status && item.status !== 'ok' && <span className="badge bad">{item.status}</span>}
      </div>
      <Text text={item.text} className="mono" />
    </SelectSeq>
  );
}

function Files({ files }: { files: readonly ConvItem[] }) {
  return (
    <>
      {files.map((f) => (
        <SelectSeq key={f.seq} seq={f.seq} className="conv-file">
          <div className="conv-label" data-testid="conv-file">
            ✎ <span className="mono">{f.path}</span> <span className="mono dim">#{f.seq}</span>
          </div>
          {f.patch ? <PatchView patch={f.patch} /> : null}
        </SelectSeq>
      ))}
    </>
  );
}

const ItemBody = memo(function ItemBody({ row }: { row: ItemRow }) {
  const it = row.item;
  switch (it.type) {
    case 'prompt':
      return (
        <SelectSeq seq={it.seq} className={`conv-prompt${it.meta ? ' meta' : ''}`}>
          <div className="conv-label">
            {it.label ?? 'User'} <span className="mono dim">#{it.seq}</span>
          </div>
          {it.meta ? (
            <details>
              <summary className="dim">{it.text.split('\n')[0]!.slice(0, 120)}</summary>
              <Text text={it.text} />
            </details>
          ) : (
            <Text text={it.text} />
          )}
        </SelectSeq>
      );
    case 'text':
      return (
        <SelectSeq seq={it.seq} className="conv-model">
          <div className="conv-label">
            Model <span className="mono dim">#{it.seq}</span>
          </div>
          <Text text={it.text} />
        </SelectSeq>
      );
    case 'thinking':
      return (
        <SelectSeq seq={it.seq} className="conv-thinking">
          <details data-testid="conv-thinking">
            <summary>
              Thinking <span className="mono dim">#{it.seq}</span>
            </summary>
            <Text text={it.text} />
          </details>
        </SelectSeq>
      );
    case 'call':
      return (
        <div className="conv-callrow">
          <div className="conv-pair">
            <SelectSeq seq={it.seq} className="conv-call">
              <div className="conv-label" data-testid="conv-call" data-call-id={it.callId}>
                ⚙ <span className="mono conv-tool">{it.tool}</span>{' '}
                <span className="mono dim">#{it.seq}</span>
              </div>
              <Text text={it.text} className="mono" />
            </SelectSeq>
            {row.result ? (
              <Result item={row.result} />
            ) : row.denied ? (
              <SelectSeq seq={row.denied.seq} className="conv-result tone-bad">
                <div className="conv-label" data-testid="conv-denied">
                  ✕ denied <span className="mono dim">#{row.denied.seq}</span>
                </div>
                <Text text={row.denied.text} className="mono" />
              </SelectSeq>
            ) : (
              <div className="conv-result pending dim">no result yet</div>
            )}
          </div>
          {row.agentId && <SubagentLink agentId={row.agentId} />}
          {row.sidechainAt !== undefined && (
            <button
              type="button"
              className="btn small conv-subagent"
              data-testid="sidechain-link"
              title="the subagent's conversation, kept in this session's file (a sidechain)"
              onClick={(e) => {
                e.stopPropagation();
                useApp.getState().setSeq(row.sidechainAt!);
              }}
            >
              ↳ subagent at #{row.sidechainAt}
            </button>
          )}
          <Files files={row.files} />
        </div>
      );
    case 'result':
      return (
        <div className="conv-callrow">
          <div className="dim conv-orphan">result of call {it.callId ?? '?'}</div>
          <Result item={it} />
          {row.agentId && <SubagentLink agentId={row.agentId} />}
        </div>
      );
    case 'file':
      return <Files files={[it]} />;
    case 'note':
      return (
        <SelectSeq seq={it.seq} className={`conv-note tone-${it.tone}`}>
          <span className="conv-label">{it.label}</span> <span className="conv-note-text">{it.text}</span>{' '}
          <span className="mono dim">#{it.seq}</span>
        </SelectSeq>
      );
  }
});

function ConvRow({ row, side, sideStart }: { row: ItemRow; side: boolean; sideStart: boolean }) {
  const selected = useApp((s) => row.seqs.includes(s.viewSeq));
  const it = row.item;
  return (
    <div
      className={`conv-item conv-${it.type}-item${side ? ' sidechain' : ''}${selected ? ' selected' : ''}`}
      data-testid="conv-item"
      data-type={it.type}
      data-seq={it.seq}
      data-kind={it.kind}
      aria-selected={selected}
    >
      {row.branchFrom !== undefined && (
        <button
          type="button"
          className="linklike conv-branch"
          data-testid="conv-branch"
          title="this message does not follow the one above: it continues an earlier point (a rewind or an edit)"
          onClick={() => useApp.getState().setSeq(row.branchFrom!)}
        >
          ↳ branch: continues from #{row.branchFrom}
        </button>
      )}
      {sideStart && (
        <div className="conv-side-label dim" data-testid="conv-sidechain">
          subagent (a sidechain of this session)
        </div>
      )}
      <ItemBody row={row} />
      {row.branches && (
        <div className="conv-fork dim" data-testid="conv-fork">
          ⇶ {row.branches.length} branches from here:{' '}
          {row.branches.map((s) => (
            <button
              key={s}
              type="button"
              className="linklike mono"
              onClick={() => useApp.getState().setSeq(s)}
            >
              #{s}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

function Placeholder({ row, model }: { row: PageRow; model: ConversationModel }) {
  useEffect(() => {
    void model.ensure(row.page);
  }, [model, row.page]);
  return (
    <div className="conv-item conv-placeholder dim" data-testid="conv-loading">
      {model.isFailed(row.page)
        ? `events ${row.from}–${row.to} could not be read`
        : `Loading events ${row.from}–${row.to}…`}
    </div>
  );
}

/**
 * The run as a conversation: prompts, text, thinking folded, each call beside its result, subagents
 * linked, file changes with patches, Claude Code branches marked. Virtualised, read a page at a time.
 */
export function ConversationView() {
  const runId = useApp((s) => s.runId)!;
  const head = useApp((s) => s.head);
  const fmt = useRunFormat();
  const model = useMemo(() => conversationModel(runId, fmt, head), [runId, fmt, head]);
  useSyncExternalStore((fn) => model.subscribe(fn), model.getVersion);
  const { rows } = model.rows();
  const parentRef = useRef<HTMLDivElement>(null);
  const parent = parentSessionOf(runId);
  const parentExists = useApp((s) => (parent ? (s.runs?.some((r) => r.run_id === parent) ?? false) : false));

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parentRef.current,
    estimateSize: (i) => {
      const r = rows[i];
      return !r || r.kind === 'page' ? 40 : (ESTIMATE[r.item.type] ?? 60);
    },
    getItemKey: (i) => rows[i]?.key ?? i,
    overscan: 6,
    ...sizesAfterLayout<HTMLDivElement, Element>(),
  });
  const { items, before, after } = flowRows(virtualizer);

  // The inspector asks ahead for the state of the next stop of the conversation, not of seq + 1.
  useEffect(() => {
    setStepHint((seq, dir) => model.peekStep(seq, dir));
    return () => setStepHint(null);
  }, [model]);

  // The selected seq's row stays in view: on a step, a click in the timeline, follow.
  useLayoutEffect(() => {
    let last = -1;
    const scrollTo = (seq: number) => {
      if (seq < 1) return;
      const i = model.rowIndexOf(seq);
      if (i < 0 || i === last) return;
      last = i;
      // The first row of a view not scrolled yet is in view: known without reading the element's
      // scroll and size, which lays the page out in React's commit (~6 ms of the click that opens a
      // run, at its first event, in a CPU profile).
      if (i === 0 && !virtualizer.scrollOffset) return;
      // A row already in view stays where it is: most steps (a call to its result, the next row)
      // scroll nothing, and a scroll re-measures the rows it brings in.
      const el = parentRef.current;
      const m = virtualizer.measurementsCache[i];
      if (
        el &&
        m &&
        m.start >= el.scrollTop &&
        Math.min(m.end, m.start + el.clientHeight) <= el.scrollTop + el.clientHeight
      )
        return;
      virtualizer.scrollToIndex(i, { align: 'auto' });
    };
    scrollTo(useApp.getState().viewSeq);
    const offStore = useApp.subscribe((s, prev) => {
      if (s.viewSeq !== prev.viewSeq) {
        last = -1;
        scrollTo(s.viewSeq);
      }
    });
    // Pages derived later may move the row: scroll again once it exists.
    const offModel = model.subscribe(() => {
      last = -1;
      requestAnimationFrame(() => scrollTo(useApp.getState().viewSeq));
    });
    return () => {
      offStore();
      offModel();
    };
  }, [model, virtualizer]);

  return (
    <div className="conversation-wrap">
      {parent && (
        <div className="conv-parent">
          subagent of{' '}
          {parentExists ? (
            <button
              type="button"
              className="linklike mono"
              data-testid="parent-session-link"
              onClick={() => useApp.getState().selectRun(parent)}
            >
              {parent}
            </button>
          ) : (
            <span className="mono">{parent}</span>
          )}
        </div>
      )}
      <div ref={parentRef} className="conversation" data-testid="conversation-view" data-rows={rows.length}>
        {head === 0 ? (
          <div className="loading">No events yet.</div>
        ) : (
          <>
            <div style={{ height: before }} />
            {items.map((v) => {
              const row = rows[v.index]!;
              const prev = rows[v.index - 1];
              // A subagent's own run is all sidechain: nested only inside its parent session.
              const side = !parent && row.kind === 'item' && row.item.sidechain === true;
              const sideStart = side && !(prev?.kind === 'item' && prev.item.sidechain === true);
              return (
                <div key={v.key} data-index={v.index} ref={virtualizer.measureElement} className="conv-slot">
                  {row.kind === 'page' ? (
                    <Placeholder row={row} model={model} />
                  ) : (
                    <ConvRow row={row} side={side} sideStart={sideStart} />
                  )}
                </div>
              );
            })}
            <div style={{ height: after }} />
          </>
        )}
      </div>
    </div>
  );
}
