import { KIND_RE, MAX_SEQ } from '../../../shared/protocol';
import type { Json, MapError, MappedEvent } from './types';

/**
 * The fields ProofLoop's envelope and seed 000's share (`seq`, `run_id`, `kind`, `v`, `at`,
 * `payload`), read as written. A record is an event when it has a usable seq and a kind; whatever
 * else is wrong with it (an `at` that is a number, no `v`, a payload that is not an object) is
 * named in `invalid` and the event is stored as the line has it.
 */
export function envelopeEvent(o: Json, requireV: boolean): MappedEvent | MapError {
  const seq = o.seq;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1 || seq > MAX_SEQ)
    return { error: `seq must be an integer from 1 to ${MAX_SEQ}; the line has ${describe(seq)}` };
  const kind = o.kind;
  if (typeof kind !== 'string' || kind.length === 0 || kind.length > 200)
    return { error: `kind must be a non-empty string; the line has ${describe(kind)}` };
  const problems: string[] = [];
  if (!KIND_RE.test(kind)) problems.push('kind must be a snake_case name');
  const runId = o.run_id;
  // Seed 000 bounds no run id; ProofLoop's envelope (requireV) holds 1 to 200 characters. Either
  // way a non-empty id names the run, stored under a safe id when it cannot be used as is
  // (importer.ts), its events digested over the id as written.
  if (
    runId !== undefined &&
    (typeof runId !== 'string' || runId.length === 0 || (requireV && runId.length > 200))
  )
    problems.push(
      requireV ? 'run_id must be a string of 1 to 200 characters' : 'run_id must be a non-empty string',
    );
  let at = '';
  if (typeof o.at === 'string' && o.at.length > 0) at = o.at;
  else problems.push(`at must be a non-empty string; the line has ${describe(o.at)}`);
  let v = 1;
  if (o.v !== undefined || requireV) {
    if (typeof o.v === 'number' && Number.isSafeInteger(o.v) && o.v > 0) v = o.v;
    else problems.push(`v must be a positive integer; the line has ${describe(o.v)}`);
  }
  const payload = o.payload;
  const isObj = typeof payload === 'object' && payload !== null && !Array.isArray(payload);
  if (!isObj) problems.push(`payload must be an object; the line has ${describe(payload)}`);
  const ev: MappedEvent = {
    kind,
    at,
    v,
    seq,
    payload: (isObj ? payload : (payload ?? null)) as Json,
  };
  if (typeof runId === 'string' && runId.length > 0) ev.run = runId;
  if (problems.length > 0) ev.invalid = `envelope: ${problems.join('; ')}`;
  return ev;
}

function describe(x: unknown): string {
  if (x === undefined) return 'none';
  const t = JSON.stringify(x) ?? String(x);
  return t.length > 40 ? `${t.slice(0, 40)}…` : t;
}
