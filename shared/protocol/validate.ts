import type * as z from '../zod';
import { EnvelopeSchema, type LedgerEvent } from './envelope';
import { isKnownKind, payloadSchemas } from './kinds';
import { upcast, upcasters } from './upcast';
import { fastPayloadOk } from './fastcheck';

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

function describe(error: z.core.$ZodError): string {
  return error.issues
    .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    .slice(0, 3)
    .join('; ');
}

/** Validates an untrusted object as an envelope and, for a known kind, its (upcast) payload. */
export function checkEvent(raw: unknown): Checked<LedgerEvent> {
  const env = EnvelopeSchema.safeParse(raw);
  if (!env.success) return { ok: false, message: `envelope: ${describe(env.error)}` };
  const p = checkPayload(env.data.kind, env.data.v, env.data.payload);
  if (!p.ok) return p;
  return { ok: true, value: env.data };
}

/** Unknown kinds pass: they are kept and shown, the projection ignores them. */
export function checkPayload(kind: string, v: number, payload: Record<string, unknown>): Checked<true> {
  if (!isKnownKind(kind)) return { ok: true, value: true };
  // The hand-written check first (hot path); zod decides whenever it says no, and for kinds that
  // have upcasters (their payload is checked after upcasting).
  if (upcasters[kind] === undefined && fastPayloadOk(kind, payload)) return { ok: true, value: true };
  const up = upcast(kind, v, payload);
  const r = payloadSchemas[kind].safeParse(up.payload);
  if (!r.success) return { ok: false, message: `payload of ${kind}: ${describe(r.error)}` };
  return { ok: true, value: true };
}
