import { interpret, type Interpreted } from '../../../shared/formats';
import type { StoredEvent } from '../../api/types';

/**
 * An imported event read as protocol v1 by its format's view (shared/formats), once per stored
 * event object: rows re-render on every step, and a Claude Code payload is a whole line.
 */
const readings = new WeakMap<StoredEvent, { fmt: string; r: Interpreted | null }>();

export function readAs(fmt: string | null | undefined, ev: StoredEvent): Interpreted | null {
  if (!fmt) return null;
  const hit = readings.get(ev);
  if (hit && hit.fmt === fmt) return hit.r;
  let r: Interpreted | null = null;
  try {
    r = interpret(fmt, ev.kind, ev.payload as Record<string, unknown>, {
      seq: ev.seq,
      run_id: ev.run_id,
      source: ev.source ?? null,
    });
  } catch {
    // A view that cannot read a payload leaves it as stored; the payload view still shows it.
    r = null;
  }
  readings.set(ev, { fmt, r });
  return r;
}

const viewed = new WeakMap<StoredEvent, { fmt: string; ev: StoredEvent }>();

/** The event with its v1 reading as payload (for summaries, call links, durations); itself when none. */
export function asV1(fmt: string | null | undefined, ev: StoredEvent): StoredEvent {
  if (!fmt) return ev;
  const hit = viewed.get(ev);
  if (hit && hit.fmt === fmt) return hit.ev;
  const r = readAs(fmt, ev);
  const out = r ? { ...ev, payload: r.payload } : ev;
  viewed.set(ev, { fmt, ev: out });
  return out;
}
