/**
 * The conversation (session) a run this receiver made is of: the id its records named
 * (`session.id`, `conversation.id`, …: run-keys.ts), kept in its meta when runs.ts opened it.
 * A run keyed by trace or service alone names none.
 */
export function conversationOfRun(meta: Record<string, unknown>): string | null {
  const otlp = meta.otlp;
  if (typeof otlp !== 'object' || otlp === null) return null;
  const id = (otlp as Record<string, unknown>).conversation_id;
  return typeof id === 'string' && id !== '' ? id : null;
}
