import { describe, expect, it } from 'vitest';
import { PolicySchema } from '../../electron/runner/catalog';
import { globMatcher, PolicyEngine, workspaceRelative } from '../../electron/runner/policy';
import { SimModel } from '../../electron/runner/sim-agent';
import { mulberry32 } from '../../shared/prng';

const policy = PolicySchema.parse({
  version: 1,
  tools: ['list_files', 'read_file', 'search', 'apply_patch', 'run_command'],
  paths: { read: ['**', '!secrets/**'], write: ['*.js', '!test.js'], deny: ['.git/**'] },
  commands: ['node test.js'],
  budget: { steps: 5, tokens: 1000, wall_ms: 1000 },
  timeouts: { run_command: 500, default: 100 },
});
const engine = new PolicyEngine(policy);

describe('policy.decide', () => {
  it('allows listed tools on paths that match the globs, naming the rule', () => {
    expect(engine.decide({ tool: 'read_file', args: { path: 'price.js' } })).toMatchObject({
      allowed: true,
      rule: 'paths.read',
    });
    expect(engine.decide({ tool: 'apply_patch', args: { path: 'price.js', patch: 'x' } })).toMatchObject({
      allowed: true,
      rule: 'paths.write',
    });
    expect(engine.decide({ tool: 'run_command', args: { command: 'node   test.js' } })).toMatchObject({
      allowed: true,
      rule: 'commands',
    });
  });

  it('denies unknown and unlisted tools, bad args, escapes, deny globs, write globs and commands', () => {
    const d = (tool: string, args: unknown) => engine.decide({ tool, args });
    expect(d('http_get', { url: 'x' })).toMatchObject({ allowed: false, rule: 'tools' });
    expect(d('write_file', { path: 'a.js', content: '' })).toMatchObject({ allowed: false, rule: 'tools' });
    expect(d('read_file', { file: 'a.js' })).toMatchObject({ allowed: false, rule: 'args' });
    for (const p of ['../x.js', '/etc/passwd', 'a/../../x', '..\\x', 'C:\\x']) {
      expect(d('read_file', { path: p }), p).toMatchObject({ allowed: false, rule: 'workspace' });
    }
    expect(d('read_file', { path: '.git/config' })).toMatchObject({ allowed: false, rule: 'paths.deny' });
    expect(d('read_file', { path: 'secrets/key' })).toMatchObject({ allowed: false, rule: 'paths.read' });
    expect(d('apply_patch', { path: 'test.js', patch: 'x' })).toMatchObject({
      allowed: false,
      rule: 'paths.write',
    });
    expect(d('apply_patch', { path: 'lib/a.js', patch: 'x' })).toMatchObject({
      allowed: false,
      rule: 'paths.write',
    });
    expect(d('run_command', { command: 'node test.js; rm -rf /' })).toMatchObject({
      allowed: false,
      rule: 'commands',
    });
  });

  it('has per-tool timeouts with a default', () => {
    expect(engine.timeoutOf('run_command')).toBe(500);
    expect(engine.timeoutOf('read_file')).toBe(100);
  });

  it('normalizes workspace paths and matches negated globs', () => {
    expect(workspaceRelative('./a/b/../c.js')).toBe('a/c.js');
    expect(workspaceRelative('.')).toBe('.');
    expect(workspaceRelative('a/../..')).toBeNull();
    const m = globMatcher(['**/*.js', '!test.js']);
    expect([m('a.js'), m('x/y.js'), m('test.js'), m('a.ts')]).toEqual([true, true, false, false]);
  });
});

describe('simulated model', () => {
  const task = {
    id: 't',
    goal: 'g',
    judge_command: 'node test.js',
    hints: {
      explore: ['a.js', 'b.js', 'c.js', 'd.js'],
      search: ['x', 'y', 'z'],
      target: 'a.js',
      fix: { find: 'bug', replace: 'fix' },
    },
  };
  const firstSteps = (seed: number) => {
    const m = new SimModel(task, 'careful', seed);
    const out = [m.next(null)];
    for (let i = 0; i < 4; i++)
      out.push(m.next({ kind: 'tool', call_id: `c${i + 1}`, tool: 'x', status: 'ok', output: 'ok' }));
    return JSON.stringify(out);
  };
  it('is deterministic for a seed, and the seed changes its choices', () => {
    expect(firstSteps(1)).toBe(firstSteps(1));
    expect(new Set([1, 2, 3, 4, 5].map(firstSteps)).size).toBeGreaterThan(1);
    expect(mulberry32(42)()).toBe(mulberry32(42)());
  });
});
