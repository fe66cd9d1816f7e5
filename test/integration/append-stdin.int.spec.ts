import { describe, expect, it } from 'vitest';
import { Ledger, verifyEvents } from '../../electron/ledger';
import { cli, cliWithStdin, perTest } from './helpers/tmp';

const { folder } = perTest();

const line = (kind: string, payload: Record<string, unknown>) => JSON.stringify({ kind, payload }) + '\n';
const said = (i: number) => line('model_responded', { content: `step ${i}` });

/**
 * `append <run> --stdin --json` left open, as an agent keeps it: write lines to `child.stdin`, and
 * `next()` resolves with the next stored event it prints.
 */
function openStream(dir: string, run: string) {
  const waiting: ((l: string) => void)[] = [];
  const ready: string[] = [];
  const { child, done } = cliWithStdin(['--folder', dir, '--json', 'append', run, '--stdin'], (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else ready.push(l);
  });
  const next = () =>
    new Promise<string>((resolve) => {
      const l = ready.shift();
      if (l !== undefined) resolve(l);
      else waiting.push(resolve);
    });
  return { child, done, next };
}

/** `append <run> --stdin` given all of `input` at once, to its end. */
function pipeIn(dir: string, run: string, input: string | Buffer, json = false) {
  const { child, done } = cliWithStdin([
    '--folder',
    dir,
    ...(json ? ['--json'] : []),
    'append',
    run,
    '--stdin',
  ]);
  child.stdin.end(input);
  return done;
}

function stored(dir: string, run: string) {
  const ledger = Ledger.open(dir);
  try {
    const events = ledger.read(run);
    const r = ledger.run(run)!;
    const ok = verifyEvents(run, events, { expectedHead: { seq: r.head_seq, hash: r.head_hash } }).ok;
    return { events, ok };
  } finally {
    ledger.close();
  }
}

describe('proofloop append <run> --stdin', () => {
  it('commits each line as it arrives, in one process, before the agent writes the next', async () => {
    const dir = folder();
    const { child, done, next } = openStream(dir, 'live');
    for (let i = 1; i <= 3; i++) {
      child.stdin.write(said(i));
      const ack = JSON.parse(await next()) as { seq: number; hash: string };
      expect(ack.seq).toBe(i);
      // Already in the ledger (and durable) while the stream is still open.
      const now = stored(dir, 'live').events;
      expect(now).toHaveLength(i);
      expect(now[i - 1]!.hash).toBe(ack.hash);
    }
    child.stdin.end();
    expect((await done).code).toBe(0);
  });

  it('takes a piped file of 5,000 lines, redacting as every append does', async () => {
    const dir = folder();
    const text: string[] = [];
    for (let i = 1; i <= 5_000; i++) {
      text.push(i % 1_000 === 0 ? line('model_responded', { content: `token=abcd1234secret${i}` }) : said(i));
    }
    // Windows line ends and a last line without its newline are read too.
    const input = text.join('').replace(said(2), said(2).replace('\n', '\r\n')).slice(0, -1);
    const r = await pipeIn(dir, 'bulk', input, true);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const acks = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number });
    expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: 5_000 }, (_, i) => i + 1));
    const { events, ok } = stored(dir, 'bulk');
    expect(events).toHaveLength(5_000);
    expect(ok).toBe(true);
    expect(events[999]!.payload.content).toBe('token=[REDACTED:secret_assignment#1]');
    expect(events[1]!.payload.content).toBe('step 2');
  });

  it('stops at a bad line, naming it, with every line before it appended and none after', async () => {
    const dir = folder();
    // Line 4 is blank; line 5 fails its kind's schema.
    const bad = await pipeIn(
      dir,
      'r',
      said(1) + said(2) + said(3) + '\n' + line('tool_returned', { call_id: 'c1' }) + said(6),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^proofloop: stdin line 5: payload of tool_returned: status/);
    expect(stored(dir, 'r').events.map((e) => e.payload.content)).toEqual(['step 1', 'step 2', 'step 3']);

    const notJson = await pipeIn(dir, 'r', said(4) + '{"kind":"model_responded",\n' + said(5));
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^proofloop: stdin line 2: not JSON/);
    const typo = await pipeIn(dir, 'r', JSON.stringify({ type: 'model_responded', payload: {} }) + '\n');
    expect(typo.stderr).toMatch(/stdin line 1: unknown field "type"/);
    // Bytes that are not UTF-8 are refused, not replaced: the line is named, the one before kept.
    const garbled = await pipeIn(
      dir,
      'r',
      Buffer.concat([
        Buffer.from(said(5)),
        Buffer.from('{"kind":"model_responded","payload":{"content":"caf'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}}\n'),
      ]),
    );
    expect(garbled.code).toBe(2);
    expect(garbled.stderr).toMatch(/^proofloop: stdin line 2: not valid UTF-8/);
    const { events, ok } = stored(dir, 'r');
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(ok).toBe(true);
  });

  it('holds the run: another writer is refused until the stream ends', async () => {
    const dir = folder();
    const { child, done, next } = openStream(dir, 'held');
    child.stdin.write(said(1));
    await next();
    const other = await cli(['--folder', dir, 'append', 'held', 'model_responded', '{"content":"me too"}']);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/run held already has a writer: pid \d+ .*\(append --stdin\)/);
    child.stdin.end();
    expect((await done).code).toBe(0);
    const after = await cli(['--folder', dir, 'append', 'held', 'model_responded', '{"content":"now"}']);
    expect(after.code).toBe(0);
    expect(stored(dir, 'held').events).toHaveLength(2);
  });
});
