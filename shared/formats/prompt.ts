/**
 * A "user" message that a program wrote, not the person: Codex sends AGENTS.md and an
 * <environment_context> as user messages, Claude Code a command's caveats and output. Neither is
 * the prompt that names a session; the conversation view folds them.
 */
const CONTEXT_PROMPT =
  /^\s*(<(environment_context|user_instructions|INSTRUCTIONS|local-command-caveat|command-name|command-message|local-command-stdout|system-reminder)\b|# AGENTS\.md instructions)/;

export function isContextPrompt(text: string): boolean {
  return CONTEXT_PROMPT.test(text);
}
