import { describe, expect, it } from 'vitest';
import { sessionOf } from '../../shared/formats';
import { conversationOfRun } from '../../electron/otlp/session';

/**
 * Which runs are of one session (issue 28: a transcript and its telemetry read together): each
 * format's rule, on the ids the importer and the receiver give runs.
 */
describe('the session a run is of', () => {
  it('Claude Code: the session id the file is named by; a subagent’s run is its parent session’s', () => {
    expect(sessionOf('claude_code', 'f68636f6-f44d-48f2-b32b-ca466e713fa8')).toBe(
      'f68636f6-f44d-48f2-b32b-ca466e713fa8',
    );
    expect(sessionOf('claude_code', 'f68636f6-f44d-48f2-b32b-ca466e713fa8:agent-a8e278a84fc516724')).toBe(
      'f68636f6-f44d-48f2-b32b-ca466e713fa8',
    );
  });

  it('Codex: the thread id that ends the rollout’s name (its telemetry’s conversation.id)', () => {
    expect(sessionOf('codex', 'rollout-2026-12-03T22-26-03-01a23e03-c11c-75e0-8ba5-0bfa1ae715f0')).toBe(
      '01a23e03-c11c-75e0-8ba5-0bfa1ae715f0',
    );
    // A file not named as Codex names them keeps its name as its session.
    expect(sessionOf('codex', 'small')).toBe('small');
  });

  it('a format with no sessions, and an OTLP run keyed by trace, are of none', () => {
    expect(sessionOf('swe_agent', 'x')).toBeNull();
    expect(sessionOf('proofloop', 'x')).toBeNull();
    expect(conversationOfRun({ otlp: { trace_id: 'ab' } })).toBeNull();
    expect(conversationOfRun({})).toBeNull();
    expect(conversationOfRun({ otlp: { conversation_id: 'c1', trace_id: 'ab' } })).toBe('c1');
  });
});
