import { sha256Hex } from '../../crypto';

/**
 * The lane of a conversation by the prompt that started it: `main` for the run's own prompt,
 * `sub:<sha of the prompt, 12 hex>` for a subagent (its prompt is in the main lane's recorded call,
 * so it is the same in a replay). Calls without tools are the `side` lane (the dialect decides).
 */
export function promptLane(prompt: string, runPrompt: string): string {
  if (prompt.trim() === runPrompt.trim()) return 'main';
  return `sub:${sha256Hex(prompt.trim()).slice(0, 12)}`;
}
