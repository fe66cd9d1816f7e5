import { useEffect, useState } from 'react';
import { call } from '../../api/api';
import type { StoredEvent } from '../../api/types';
import { summarize } from '../../ui/kinds';

/** Events are read a page at a time per run, for the diff rows on screen only. */
const PAGE = 200;
const MAX_PAGES = 200;
const pages = new Map<string, Promise<Map<number, string>>>();

function pageOf(runId: string, seq: number): Promise<Map<number, string>> {
  const p = Math.floor((seq - 1) / PAGE);
  const key = `${runId}\u0000${p}`;
  let got = pages.get(key);
  if (!got) {
    if (pages.size >= MAX_PAGES) pages.delete(pages.keys().next().value!);
    got = call('events.read', { run_id: runId, from: p * PAGE + 1, to: (p + 1) * PAGE, limit: PAGE }).then(
      (r) => new Map(r.ok ? r.value.events.map((e: StoredEvent) => [e.seq, summarize(e)] as const) : []),
    );
    pages.set(key, got);
  }
  return got;
}

/** What an event of a diffed run is about (`search(percent)`), once its page is read; '' until then. */
export function useSummary(runId: string | null, seq: number | null): string {
  const [text, setText] = useState<{ key: string; text: string } | null>(null);
  const key = `${runId}/${seq}`;
  useEffect(() => {
    if (!runId || seq == null) return;
    let live = true;
    void pageOf(runId, seq).then((m) => {
      if (live) setText({ key, text: m.get(seq) ?? '' });
    });
    return () => {
      live = false;
    };
  }, [runId, seq, key]);
  return text?.key === key ? text.text : '';
}

/** Forgets the pages of a run (it grew, or a diff was reopened). */
export function forgetDiffEvents(): void {
  pages.clear();
}
