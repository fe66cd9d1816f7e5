import { writeJsonl } from './server';

/** The Claude Code session whose tool output is too large for its event (over the 64 Ki bound). */
export const MOVED_SESSION = 'moved-values-session';
/** 200 KB of output with a marker at its end, which the event's excerpt lacks. */
export const MOVED_OUTPUT = `${'row of test output\n'.repeat(10_000)}END-OF-OUTPUT`;

const env = (type: string, uuid: string, parentUuid: string | null) => ({
  parentUuid,
  isSidechain: false,
  userType: 'external',
  cwd: '/home/dev/app',
  sessionId: MOVED_SESSION,
  version: '2.1.38',
  type,
  uuid,
  timestamp: '2026-02-10T09:00:00.000Z',
});

/** Writes the session into `folder` as Claude Code lays it out: its import moves the output (seq 2) to an artifact. */
export function writeMovedValueSession(folder: string): void {
  writeJsonl(folder, `-home-dev-app/${MOVED_SESSION}.jsonl`, [
    { ...env('user', 'u-1', null), message: { role: 'user', content: 'run the tests' } },
    {
      ...env('user', 'u-2', 'u-1'),
      message: {
        role: 'user',
        content: [{ tool_use_id: 'toolu_big', type: 'tool_result', content: MOVED_OUTPUT, is_error: false }],
      },
    },
  ]);
}
