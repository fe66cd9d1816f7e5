/**
 * Messages between the host and the simulated model process (IPC, `process.send`). The two share
 * no memory: the model sees only what these messages carry, and only the host writes the ledger.
 *
 *   host → model  init     {task, variant, seed, resumed, history}   then the model answers with `act`
 *   host → model  observe  {obs}                                      the model answers with `act`
 *   model → host  act      {action}                                   a tool call or a final answer
 *
 * Strict lockstep: one `act` per `init`/`observe`. `history` holds the observations of steps already
 * recorded in the ledger (resume): the model rebuilds its state from them without being asked again.
 */
import type { SimHints } from './catalog';

import type { Variant } from '../../shared/api/variants';

export { VARIANTS, isVariant, type Variant } from '../../shared/api/variants';

export interface ModelTask {
  id: string;
  goal: string;
  judge_command: string;
  hints: SimHints | null;
}

export type ObservationStatus = 'ok' | 'error' | 'timeout' | 'denied' | 'interrupted';

export type Observation =
  | { kind: 'tool'; call_id: string; tool: string; status: ObservationStatus; output: string }
  | { kind: 'verdict'; passed: boolean; tests_passed: number; tests_failed: number; output: string };

export type Action =
  | { kind: 'call'; tool: string; args: Record<string, unknown>; tokens: number }
  | { kind: 'final'; content: string; tokens: number; give_up: boolean };

export type HostMessage =
  | {
      type: 'init';
      task: ModelTask;
      variant: Variant;
      seed: number;
      resumed: boolean;
      history: Observation[];
    }
  | { type: 'observe'; obs: Observation };

export type ModelMessage = { type: 'act'; action: Action } | { type: 'error'; message: string };
