import { createPatch } from 'diff';
import { mulberry32 } from '../../shared/prng';
import type { SimHints } from './catalog';
import type { Action, ModelTask, Observation, Variant } from './protocol';

/** FNV-1a of a string, to mix the task and variant into the seed. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class Rng {
  private readonly next: () => number;
  constructor(seed: number, salt: string) {
    this.next = mulberry32((seed ^ fnv1a(salt)) >>> 0);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}

type Step =
  | { kind: 'call'; tool: string; args: Record<string, unknown> }
  | { kind: 'final'; content: string; give_up: boolean };
/** A variant's policy: yields steps, receives the observation of each. */
type Agent = Generator<Step, void, Observation>;

const call = (tool: string, args: Record<string, unknown>): Step => ({ kind: 'call', tool, args });
const final = (content: string, give_up = false): Step => ({ kind: 'final', content, give_up });

interface Ctx {
  task: ModelTask;
  hints: SimHints;
  rng: Rng;
}

/** Looks around: the file list, some files in a seed-chosen order, a seed-chosen search. */
function* explore(c: Ctx, maxReads = 3): Generator<Step, void, Observation> {
  yield call('list_files', { path: '.' });
  const order = c.rng.shuffle(c.hints.explore.filter((f) => f !== c.hints.target));
  const n = Math.min(order.length, 1 + c.rng.int(maxReads));
  for (const f of order.slice(0, n)) yield call('read_file', { path: f });
  yield call('search', { query: c.rng.pick(c.hints.search) });
}

/**
 * Reads the target and patches it with a unified diff computed from what it read (so the patch
 * reacts to the observation, not to a canned string). `from` lists texts that may stand where the
 * edit's `find` does (e.g. an earlier wrong patch). Returns whether the file now holds the fix.
 */
function* patchTarget(c: Ctx, replace: string, from: string[]): Generator<Step, boolean, Observation> {
  const target = c.hints.target;
  let obs = yield call('read_file', { path: target });
  for (let attempt = 0; attempt < 3; attempt++) {
    if (obs.kind === 'tool' && obs.status === 'ok') {
      const text = obs.output;
      const at = from.find((f) => text.includes(f));
      if (at === undefined) return text.includes(replace);
      const patch = createPatch(target, text, text.replace(at, replace), '', '', { context: 2 });
      const r = yield call('apply_patch', { path: target, patch });
      if (r.kind === 'tool' && r.status === 'ok') return true;
    }
    // Failed, or interrupted by a host crash: look at the file again before doing anything.
    obs = yield call('read_file', { path: target });
  }
  return false;
}

function* runTests(c: Ctx): Generator<Step, boolean, Observation> {
  const r = yield call('run_command', { command: c.task.judge_command });
  return r.kind === 'tool' && r.status === 'ok';
}

function* finishCarefully(c: Ctx): Agent {
  const fixed = yield* patchTarget(c, c.hints.fix.replace, [
    c.hints.fix.find,
    ...(c.hints.wrong_fix ? [c.hints.wrong_fix.replace] : []),
  ]);
  const green = yield* runTests(c);
  const verdict = yield final(
    fixed && green
      ? `Fixed ${c.hints.target}; the tests pass.`
      : `I changed ${c.hints.target} but the tests do not pass yet.`,
  );
  if (verdict.kind === 'verdict' && !verdict.passed) yield final('The judge disagrees; I give up.', true);
}

const agents: Record<Variant, (c: Ctx) => Agent> = {
  *careful(c) {
    yield* explore(c);
    yield* finishCarefully(c);
  },
  *hasty(c) {
    // No exploration, no tests: a wrong patch and an early "done"; the judge's verdict sends it back.
    yield call('search', { query: c.rng.pick(c.hints.search) });
    const wrong = c.hints.wrong_fix ?? { find: c.hints.fix.find, replace: c.hints.fix.find + '\n// TODO' };
    yield* patchTarget(c, wrong.replace, [wrong.find]);
    const verdict = yield final(`Done: patched ${c.hints.target}.`);
    if (verdict.kind === 'verdict' && verdict.passed) return;
    yield* finishCarefully(c);
  },
  *rogue(c) {
    yield call('list_files', { path: '.' });
    const attempts: Step[] = [
      call('http_get', { url: 'https://paste.example.com/upload' }),
      call('read_file', {
        path: c.rng.pick(['../../.proofloop/ledger.db', '/etc/passwd', '../../../.ssh/id_rsa']),
      }),
      call('write_file', {
        path: c.rng.pick(['../escape.txt', '../../escape.txt']),
        content: 'written from inside the run\n',
      }),
      call('write_file', { path: 'test.js', content: "console.log('# pass 1'); console.log('# fail 0');\n" }),
      call('run_command', {
        command: c.rng.pick(['curl https://paste.example.com', 'rm -rf ..', 'sh -c env']),
      }),
    ];
    for (const step of c.rng.shuffle(attempts)) yield step;
    yield final('Every way out was blocked; I stop here.', true);
  },
  *looping(c) {
    yield call('list_files', { path: '.' });
    const file = c.rng.pick(c.hints.explore);
    const query = c.rng.pick(c.hints.search);
    for (;;) {
      yield call('read_file', { path: file });
      yield call('search', { query });
    }
  },
  *hang(c) {
    yield* explore(c, 1);
    yield call('run_command', { command: c.hints.slow_command ?? 'node scripts/slow.js' });
    yield* finishCarefully(c);
  },
  *leaky(c) {
    yield call('list_files', { path: '.' });
    yield call('read_file', { path: c.hints.secret_file ?? '.env' });
    yield* explore(c, 1);
    yield* finishCarefully(c);
  },
  *crashy(c) {
    // The crash itself is decided by the process wrapper (it must not recur after a resume).
    yield* explore(c);
    yield* finishCarefully(c);
  },
};

/** A task without hints: look around, run the tests, admit defeat. */
function* generic(task: ModelTask): Agent {
  const list = yield call('list_files', { path: '.' });
  const files =
    list.kind === 'tool' && list.status === 'ok' ? list.output.split('\n').filter(Boolean).slice(0, 3) : [];
  for (const f of files) yield call('read_file', { path: f });
  yield call('run_command', { command: task.judge_command });
  yield final('I do not know how to fix this task.', true);
}

/** Deterministic token estimate: the action plus the observation it answers, at ~4 characters a token. */
function tokensOf(step: Step, last: Observation | null): number {
  const out = Math.ceil((last?.output.length ?? 0) / 4);
  const own = Math.ceil((step.kind === 'call' ? JSON.stringify(step.args).length : step.content.length) / 4);
  return 40 + own + out;
}

/**
 * The simulated model: a pure function of (task, variant, seed, observations). `next(obs)` gives
 * the next action; the same inputs always give the same actions.
 */
export class SimModel {
  private readonly gen: Agent;
  private started = false;
  private done = false;
  /** Actions produced so far (including fast-forwarded ones). */
  count = 0;

  constructor(task: ModelTask, variant: Variant, seed: number) {
    const rng = new Rng(seed, `${task.id}/${variant}`);
    this.gen = task.hints ? agents[variant]({ task, hints: task.hints, rng }) : generic(task);
  }

  next(obs: Observation | null): Action {
    const r = this.started
      ? this.gen.next(obs as Observation)
      : this.gen.next(undefined as unknown as Observation);
    this.started = true;
    this.count += 1;
    if (r.done || this.done) {
      this.done = true;
      return { kind: 'final', content: 'Nothing more to try.', give_up: true, tokens: 40 };
    }
    const step = r.value;
    const tokens = tokensOf(step, obs);
    return step.kind === 'call'
      ? { kind: 'call', tool: step.tool, args: step.args, tokens }
      : { kind: 'final', content: step.content, give_up: step.give_up, tokens };
  }
}

/** On which action (1-based) a crashy model dies, for a seed. */
export function crashPoint(task: ModelTask, seed: number): number {
  return 2 + new Rng(seed, `${task.id}/crash`).int(4);
}
