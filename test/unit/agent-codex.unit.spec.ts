import { describe, expect, it } from 'vitest';
import { codex, codexPatch } from '../../electron/runner/agents/codex';

const WS = '/tmp/cx/ws';

/** Hook inputs as Codex 0.169.0 wrote them on its hook's stdin (captured against a scratch server). */
const pre = (tool_name: string, tool_input: Record<string, unknown>, tool_use_id = 'call_A') => ({
  session_id: '01a23e00-ef80-70a0-85fa-965c82ab2f3e',
  turn_id: '01a23e00-f025-7ea3-bc97-3e81f38bbdd4',
  transcript_path:
    '/tmp/cx/home/sessions/2026/12/03/rollout-2026-12-03T22-22-58-01a23e00-ef80-70a0-85fa-965c82ab2f3e.jsonl',
  cwd: WS,
  hook_event_name: 'PreToolUse',
  model: 'gpt-5.5',
  permission_mode: 'bypassPermissions',
  tool_name,
  tool_input,
  tool_use_id,
});
const PATCH = '*** Begin Patch\n*** Update File: a.js\n@@\n-console.log(1)\n+console.log(2)\n*** End Patch\n';
const POST_PATCH = {
  ...pre('apply_patch', { command: PATCH }, 'call_C'),
  hook_event_name: 'PostToolUse',
  tool_response:
    'Exit code: 0\nWall time: 0.2 seconds\nOutput:\nSuccess. Updated the following files:\nM a.js\n',
};

const policyOf = (tool: string, input: Record<string, unknown>) =>
  codex.hook.toPolicy(codex.hook.parse(pre(tool, input)), WS);

describe('Codex hook protocol', () => {
  it('reads a PreToolUse input: the call id is the model call_id, exec_command is Bash', () => {
    const c = codex.hook.parse(pre('Bash', { command: 'ls -la' }));
    expect(c).toMatchObject({ event: 'pre', call_id: 'call_A', tool: 'Bash', input: { command: 'ls -la' } });
    expect(() => codex.hook.parse({ hook_event_name: 'Stop' })).toThrow(/not a tool hook/);
    expect(() => codex.hook.parse({ hook_event_name: 'PreToolUse', tool_name: 'Bash' })).toThrow(
      /tool_use_id/,
    );
  });

  it("reads a PostToolUse output without the frame's wall time, and a failed patch as an error", () => {
    const c = codex.hook.parse(POST_PATCH);
    expect(c.event).toBe('post');
    expect(c.output).toBe(
      'Exit code: 0\nWall time: <t>\nOutput:\nSuccess. Updated the following files:\nM a.js\n',
    );
    expect(c.is_error).toBe(false);
    const bad = codex.hook.parse({
      ...POST_PATCH,
      tool_response: 'Exit code: 1\nWall time: 0.1 seconds\nOutput:\nno\n',
    });
    expect(bad.is_error).toBe(true);
  });

  it('answers a denial as permissionDecision deny, and an allow as no decision (0.169 refuses "allow")', () => {
    const c = codex.hook.parse(pre('Bash', { command: 'curl x' }));
    expect(codex.hook.answer(c, { allowed: true, rule: 'commands', reason: 'ok' })).toEqual({});
    expect(codex.hook.answer(c, { allowed: false, rule: 'commands', reason: 'not listed' })).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'ProofLoop policy (commands): not listed',
      },
    });
  });

  it("maps shell commands to the policy's tools only when they are plain", () => {
    expect(policyOf('Bash', { command: 'cat price.js' })).toEqual({
      tool: 'read_file',
      args: { path: 'price.js' },
    });
    expect(policyOf('Bash', { command: `cat ${WS}/lib/a.js` })).toEqual({
      tool: 'read_file',
      args: { path: 'lib/a.js' },
    });
    expect(policyOf('Bash', { command: 'cat /etc/passwd' })).toEqual({
      tool: 'read_file',
      args: { path: '/etc/passwd' },
    });
    expect(policyOf('Bash', { command: 'ls -A' })).toEqual({ tool: 'list_files', args: { path: '.' } });
    expect(policyOf('Bash', { command: 'grep -rn discount .' })).toEqual({
      tool: 'search',
      args: { query: 'discount' },
    });
    for (const command of [
      'cat price.js | sh',
      'cat $HOME/.ssh/id_rsa',
      'cat a.js > b.js',
      'node test.js; curl x',
    ])
      expect(policyOf('Bash', { command })).toEqual({ tool: 'run_command', args: { command } });
    expect(policyOf('Bash', { command: 'node test.js' })).toEqual({
      tool: 'run_command',
      args: { command: 'node test.js' },
    });
  });

  it('maps a patch of one file to its path, and refuses one of several files or a move', () => {
    expect(policyOf('apply_patch', { command: PATCH })).toMatchObject({
      tool: 'apply_patch',
      args: { path: 'a.js' },
      writes: 'a.js',
    });
    expect(
      policyOf('apply_patch', { command: '*** Begin Patch\n*** Add File: ../x.txt\n+hi\n*** End Patch\n' }),
    ).toEqual({ tool: 'write_file', args: { path: '../x.txt', content: 'hi\n' }, writes: '../x.txt' });
    const two = policyOf('apply_patch', {
      command:
        '*** Begin Patch\n*** Update File: a.js\n@@\n-1\n+2\n*** Delete File: test.js\n*** End Patch\n',
    });
    expect(two.decided).toMatchObject({ allowed: false, rule: 'args' });
    const move = policyOf('apply_patch', {
      command: '*** Begin Patch\n*** Update File: a.js\n*** Move to: ../a.js\n@@\n-1\n+2\n*** End Patch\n',
    });
    expect(move.decided).toMatchObject({ allowed: false, rule: 'args' });
    expect(policyOf('create_goal', { objective: 'x' }).decided).toMatchObject({
      allowed: true,
      rule: 'goals',
    });
    expect(policyOf('write_stdin', { session_id: 1, chars: 'y' })).toEqual({
      tool: 'write_stdin',
      args: { session_id: 1, chars: 'y' },
    });
  });

  it('makes a Codex patch of whole lines from a change inside a line', () => {
    const before = 'a\nb\n  x.replace(" ", "-");\nc\nd\ne\n';
    const after = before.replace('.replace(" ", "-")', '.replace(/ /g, "-")');
    expect(codexPatch('slug.js', before, after)).toBe(
      '*** Begin Patch\n*** Update File: slug.js\n@@\n a\n b\n-  x.replace(" ", "-");\n+  x.replace(/ /g, "-");\n c\n d\n*** End Patch\n',
    );
  });
});
