/**
 * The agents a run can use, by name: apart from registry.ts (which loads every agent's code) so
 * that the CLI checks `--agent` without loading the runner.
 */
export const AGENT_NAMES = ['sim', 'claude-code', 'codex'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

export const isAgentName = (x: string): x is AgentName => (AGENT_NAMES as readonly string[]).includes(x);
