import { CURRENT_V } from './kinds';

/** Turns a payload of version `from` into version `from + 1`. */
export type Upcaster = (payload: Record<string, unknown>) => Record<string, unknown>;
export type UpcasterRegistry = Readonly<Record<string, Readonly<Record<number, Upcaster>>>>;

/**
 * Where old payload versions become current ones. Events are upcast when read and never rewritten,
 * so the stored bytes (and their digests) stay what was written. Protocol v1 has no older versions
 * yet; a v2 of a kind adds `{ kind: { 1: upgradeV1 } }` here.
 */
export const upcasters: UpcasterRegistry = {};

export function upcast(
  kind: string,
  v: number,
  payload: Record<string, unknown>,
  registry: UpcasterRegistry = upcasters,
  target: number = CURRENT_V,
): { v: number; payload: Record<string, unknown> } {
  const steps = registry[kind];
  let cur = payload;
  let ver = v;
  while (steps && ver < target) {
    const step = steps[ver];
    if (!step) break;
    cur = step(cur);
    ver += 1;
  }
  return { v: ver, payload: cur };
}
