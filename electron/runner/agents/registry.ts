/**
 * The agents a run can use. `sim` is ProofLoop's simulated model on the host's own loop (sim.ts,
 * the default); the others are real CLIs behind the RealAgent interface (types.ts), refereed by
 * real-run.ts. Adding an agent: one file beside this one, one line below (and its name in names.ts).
 */
import { ProofloopError } from '../../../shared/result';
import { claudeCode } from './claude-code';
import { codex } from './codex';
import type { RealAgent, RealAgentName } from './types';
import { AGENT_NAMES, isAgentName } from './names';

export { AGENT_NAMES, isAgentName, type AgentName } from './names';

const REAL: Partial<Record<RealAgentName, RealAgent>> = {
  'claude-code': claudeCode,
  codex,
};

/** A real agent by name, or a clear error (unknown, or known but not registered in this build). */
export function realAgent(name: string): RealAgent {
  const a = REAL[name as RealAgentName];
  if (a) return a;
  if (isAgentName(name))
    throw new ProofloopError('bad_args', `agent "${name}" is not available in this build`);
  throw new ProofloopError('bad_args', `unknown agent "${name}" (one of ${AGENT_NAMES.join(', ')})`);
}
