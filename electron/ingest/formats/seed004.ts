import type { FormatAdapter, MappedEvent } from './types';

/**
 * Seed article 004's events `{event_id, event_type, aggregate_id, payload, timestamp, version}`:
 * one run per aggregate_id, numbered in file order. The adapter names the event types it knows
 * with protocol kinds; every other type keeps its own name. event_id and version are the source's
 * ids; how the payloads read as v1 is shared/formats/seed004.ts.
 */
const KINDS: Record<string, string> = {
  agent_started: 'run_started',
  tool_result: 'tool_returned',
  model_response: 'model_responded',
  agent_completed: 'run_completed',
  agent_failed: 'run_failed',
};

export const seed004Format: FormatAdapter = {
  name: 'seed004',
  label: 'seed 004 event store',
  detect: (first) => 'event_type' in first || 'aggregate_id' in first,
  map(o) {
    const type = o.event_type;
    const aggregate = o.aggregate_id;
    if (typeof type !== 'string' || type.length === 0 || type.length > 200)
      return { error: 'seed 004 event: event_type must be a non-empty string' };
    if (typeof aggregate !== 'string' || aggregate.length === 0)
      return { error: 'seed 004 event: aggregate_id must be a non-empty string' };
    const kind = Object.prototype.hasOwnProperty.call(KINDS, type) ? KINDS[type]! : type;
    const problems: string[] = [];
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(kind)) problems.push('event_type must be a snake_case name');
    const payload = o.payload;
    const isObj = typeof payload === 'object' && payload !== null && !Array.isArray(payload);
    if (!isObj) problems.push('payload must be an object');
    const at = typeof o.timestamp === 'string' ? o.timestamp : '';
    if (at === '') problems.push('timestamp must be a non-empty string');
    const ids: Record<string, string> = { event_type: type };
    if (typeof o.event_id === 'string' || typeof o.event_id === 'number') ids.event_id = String(o.event_id);
    if (typeof o.version === 'string' || typeof o.version === 'number') ids.version = String(o.version);
    const ev: MappedEvent = {
      kind,
      at,
      payload: (isObj ? payload : (payload ?? null)) as Record<string, unknown>,
      run: aggregate,
      source: { ids },
    };
    if (problems.length > 0) ev.invalid = `seed 004 event: ${problems.join('; ')}`;
    return [ev];
  },
};
