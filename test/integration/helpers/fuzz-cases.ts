import { execFileSync } from 'node:child_process';
import { mkdirSync, openSync, closeSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';

/**
 * Generated hostile input for the import (issue 12's fuzz list): each case writes one entry named
 * like a run's file into a folder that also holds a valid run, and says which finding it deserves.
 */
export interface FuzzCase {
  name: string;
  /** Writes the case's entry into `folder`; `outside` is a folder beside it (for links out). */
  write(folder: string, outside: string): void;
  /** Findings the case must have: its code, and what its message or line must say. */
  findings: { code: string; line?: number; seq?: number | null; message?: RegExp }[];
  /**
   * The run the case's lines make, when they make one, with the seqs it must hold (the lines
   * around the bad one, and the bad one itself when it is an event).
   */
  run?: { id: string | RegExp; seqs: number[] };
  /** The run id as the file names it, when the ledger had to make it safe (runs[].meta.source_run_id). */
  sourceRunId?: string;
  /** Checks on the case's run's stored events (as `events --json` prints them). */
  check?: (events: CaseEvent[]) => void;
}

export interface CaseEvent {
  seq: number;
  run_id: string;
  kind: string;
  at: string;
  payload: Record<string, unknown>;
}

export const VALID_RUN = 'valid';
export const VALID_EVENTS = 5;

const at = (s: number) => `2026-11-29T08:00:${String(s).padStart(2, '0')}.000Z`;
const ev = (seq: number, run: string, kind: string, payload: unknown, when: unknown = at(seq)) =>
  JSON.stringify({ seq, run_id: run, kind, at: when, payload });
const started = (run: string) =>
  ev(1, run, 'run_started', { task_id: 't', goal: 'g', agent: { name: 'fz' } });

/** The valid run every case's folder holds beside the bad entry: five events, seed 000 envelope. */
export function writeValidRun(folder: string): void {
  const lines = [started(VALID_RUN)];
  for (let s = 2; s < VALID_EVENTS; s++)
    lines.push(ev(s, VALID_RUN, 'model_responded', { content: `step ${s}` }));
  lines.push(ev(VALID_EVENTS, VALID_RUN, 'run_completed', { outcome: 'passed' }));
  write(folder, `${VALID_RUN}/events.jsonl`, lines.join('\n') + '\n');
}

function write(folder: string, rel: string, data: string | Buffer): void {
  const file = path.join(folder, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
}

/** `case/events.jsonl`: seq 1 valid, the bad line as line 2 (seq 2 if it is an event), seq 3 valid. */
function around(badLine: string | Buffer, run = 'case'): (folder: string) => void {
  return (folder) => {
    const file = path.join(folder, 'case', 'events.jsonl');
    mkdirSync(path.dirname(file), { recursive: true });
    const fd = openSync(file, 'w');
    writeSync(fd, started(run) + '\n');
    writeSync(fd, typeof badLine === 'string' ? Buffer.from(badLine) : badLine);
    writeSync(fd, '\n' + ev(3, run, 'model_responded', { content: 'after' }) + '\n');
    closeSync(fd);
  };
}

const nested = (depth: number, open: string, close: string, leaf: string) =>
  open.repeat(depth) + leaf + close.repeat(depth);

function depthCases(): FuzzCase[] {
  const out: FuzzCase[] = [];
  for (const depth of [1_000, 5_000, 100_000]) {
    for (const [shape, open, close] of [
      ['objects', '{"a":', '}'],
      ['arrays', '[', ']'],
    ] as const) {
      const deep = nested(depth, open, close, '1');
      out.push({
        name: `${depth} deep ${shape} inside a payload`,
        write: around(
          `{"seq":2,"run_id":"case","kind":"context_updated","at":"${at(2)}","payload":{"op":"set","x":${deep}}}`,
        ),
        // The line holds seq 2 (read from its text, never walked): no seq_gap for it.
        findings: [{ code: 'invalid_event', line: 2, seq: 2, message: /deeper than 256/ }],
        run: { id: 'case', seqs: [1, 3] },
      });
      out.push({
        name: `${depth} deep ${shape} as an import line`,
        write: around(deep),
        // No line holds seq 2: its gap is reported where seq 3 follows.
        findings: [
          { code: 'invalid_event', line: 2, seq: null, message: /deeper than 256/ },
          { code: 'seq_gap', line: 3, seq: 3 },
        ],
        run: { id: 'case', seqs: [1, 3] },
      });
    }
  }
  return out;
}

const MB50 = 50 << 20;

export const FUZZ_CASES: FuzzCase[] = [
  ...depthCases(),
  {
    name: 'a 50 MB line',
    write: around(ev(2, 'case', 'model_responded', { content: 'x'.repeat(MB50) })),
    // Skipped unread past the 16 MiB bound; its first bytes name its seq, so no gap is reported.
    findings: [{ code: 'line_too_long', line: 2, seq: 2 }],
    run: { id: 'case', seqs: [1, 3] },
  },
  {
    name: 'a payload of 200,000 keys',
    write: around(
      `{"seq":2,"run_id":"case","kind":"context_updated","at":"${at(2)}","payload":{"op":"set",` +
        Array.from({ length: 200_000 }, (_, i) => `"k${i}":${i}`).join(',') +
        '}}',
    ),
    findings: [],
    run: { id: 'case', seqs: [1, 2, 3] },
    check: (es) => {
      const p = es.find((e) => e.seq === 2)!.payload;
      if (Object.keys(p).length !== 200_001 || p.k199999 !== 199_999)
        throw new Error(`200,000 keys not stored as written: ${Object.keys(p).length} keys`);
    },
  },
  {
    name: 'the number 1e400',
    write: around(
      `{"seq":2,"run_id":"case","kind":"context_updated","at":"${at(2)}","payload":{"op":"set","n":1e400}}`,
    ),
    findings: [{ code: 'invalid_event', line: 2, seq: 2, message: /cannot be stored as written/ }],
    run: { id: 'case', seqs: [1, 3] },
  },
  {
    name: 'the number 2^53+1',
    write: around(
      `{"seq":2,"run_id":"case","kind":"context_updated","at":"${at(2)}","payload":{"op":"set","n":9007199254740993}}`,
    ),
    findings: [{ code: 'number_rounded', line: 2, message: /9007199254740993/ }],
    run: { id: 'case', seqs: [1, 2, 3] },
  },
  {
    name: 'a lone UTF-16 surrogate in an escape',
    write: around(
      `{"seq":2,"run_id":"case","kind":"model_responded","at":"${at(2)}","payload":{"content":"a\\ud800b"}}`,
    ),
    // Valid JSON text (the escape is ASCII): stored as written, the escape kept in canonical JSON.
    findings: [],
    run: { id: 'case', seqs: [1, 2, 3] },
    check: (es) => {
      if (es.find((e) => e.seq === 2)!.payload.content !== 'a\ud800b')
        throw new Error('the lone surrogate was not stored as written');
    },
  },
  {
    name: 'a raw NUL byte',
    write: around(
      Buffer.concat([
        Buffer.from(
          `{"seq":2,"run_id":"case","kind":"model_responded","at":"${at(2)}","payload":{"content":"a`,
        ),
        Buffer.from([0]),
        Buffer.from('b"}}'),
      ]),
    ),
    // A raw control character inside a string is no JSON; the line's seq is unknown, hence the gap.
    findings: [
      { code: 'broken_json', line: 2, message: /control character/ },
      { code: 'seq_gap', line: 3, seq: 3 },
    ],
    run: { id: 'case', seqs: [1, 3] },
  },
  {
    name: 'an escaped NUL (\\u0000)',
    write: around(
      `{"seq":2,"run_id":"case","kind":"model_responded","at":"${at(2)}","payload":{"content":"a\\u0000b"}}`,
    ),
    findings: [],
    run: { id: 'case', seqs: [1, 2, 3] },
    check: (es) => {
      if (es.find((e) => e.seq === 2)!.payload.content !== 'a\u0000b')
        throw new Error('the NUL in a string was not stored as written');
    },
  },
  ...(['__proto__', 'constructor', 'toString'] as const).flatMap((name): FuzzCase[] => [
    {
      name: `${name} as a key`,
      write: around(
        `{"seq":2,"run_id":"case","kind":"context_updated","at":"${at(2)}","payload":{"op":"set","${name}":{"polluted":1},"files":{"${name}":"x"}}}`,
      ),
      findings: [],
      run: { id: 'case', seqs: [1, 2, 3] },
      check: (es) => {
        const p = es.find((e) => e.seq === 2)!.payload;
        if (!Object.prototype.hasOwnProperty.call(p, name))
          throw new Error(`the key ${name} was not stored as written: ${JSON.stringify(p)}`);
      },
    },
    {
      name: `${name} as a kind`,
      write: around(`{"seq":2,"run_id":"case","kind":"${name}","at":"${at(2)}","payload":{"x":1}}`),
      // `constructor` is a snake_case name: an unknown kind, kept; the other two are no kind names.
      findings: name === 'constructor' ? [] : [{ code: 'invalid_event', line: 2, message: /snake_case/ }],
      run: { id: 'case', seqs: [1, 2, 3] },
      check: (es) => {
        if (es.find((e) => e.seq === 2)!.kind !== name) throw new Error(`the kind ${name} was not kept`);
      },
    },
  ]),
  ...(
    [
      ['with /', 'a/b'],
      ['of ..', '..'],
      ['with \\', 'a\\b'],
      ['with NUL', 'a\u0000b'],
      ['of 10,000 characters', 'r'.repeat(10_000)],
      ['empty', ''],
    ] as const
  ).map(([what, id]): FuzzCase => ({
    name: `a run id ${what}`,
    write: (folder) => {
      const lines = [1, 2, 3].map((s) =>
        JSON.stringify({
          seq: s,
          run_id: id,
          kind: s === 1 ? 'run_started' : 'model_responded',
          at: at(s),
          payload: s === 1 ? { task_id: 't', goal: 'g', agent: { name: 'fz' } } : { content: `c${s}` },
        }),
      );
      write(folder, 'case/events.jsonl', lines.join('\n') + '\n');
    },
    // Any non-empty run id names the run (seed 000 bounds none): stored under a safe id, with the
    // id as written in source_run_id. An empty one is no id: the envelope is invalid, and the
    // events belong to the file's run.
    findings: id.length >= 1 ? [] : [{ code: 'invalid_event', line: 1, message: /run_id/ }],
    run: {
      id: id.length >= 1 ? /^[A-Za-z0-9][A-Za-z0-9._:-]*$/ : 'case',
      seqs: [1, 2, 3],
    },
    sourceRunId: id.length >= 1 && !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id) ? id : undefined,
  })),
  {
    name: 'duplicate keys in one object',
    write: around(
      `{"seq":2,"run_id":"case","kind":"model_responded","at":"${at(2)}","payload":{"content":"first","content":"second"}}`,
    ),
    // As every JSON.parse reads it: the last value wins, with no finding (see the report: telling
    // would cost a second scan of every line).
    findings: [],
    run: { id: 'case', seqs: [1, 2, 3] },
    check: (es) => {
      if (es.find((e) => e.seq === 2)!.payload.content !== 'second') throw new Error('not the last value');
    },
  },
  {
    name: 'a JSON array on one line instead of JSONL',
    write: (folder) =>
      write(
        folder,
        'case/events.jsonl',
        JSON.stringify(
          [1, 2, 3].map((s) => JSON.parse(ev(s, 'case', 'context_updated', { op: 'set', n: s }))),
        ) + '\n',
      ),
    findings: [{ code: 'invalid_event', line: 1, message: /JSON object/ }],
  },
  {
    name: 'a pretty-printed JSON array instead of JSONL',
    write: (folder) =>
      write(
        folder,
        'case/events.jsonl',
        JSON.stringify(
          [1, 2, 3].map((s) => JSON.parse(ev(s, 'case', 'context_updated', { op: 'set', n: s }))),
          null,
          2,
        ) + '\n',
      ),
    findings: [{ code: 'broken_json', line: 1 }],
  },
  {
    name: 'gzip bytes named events.jsonl',
    write: (folder) =>
      write(
        folder,
        'case/events.jsonl',
        gzipSync(Buffer.from([1, 2, 3].map((s) => ev(s, 'case', 'x', {})).join('\n'))),
      ),
    findings: [{ code: 'not_utf8' }],
  },
  {
    name: 'a FIFO named events.jsonl',
    write: (folder) => {
      mkdirSync(path.join(folder, 'case'));
      execFileSync('mkfifo', [path.join(folder, 'case', 'events.jsonl')]);
    },
    findings: [{ code: 'unreadable_file', message: /FIFO/ }],
  },
  {
    name: 'a directory named events.jsonl',
    write: (folder) => mkdirSync(path.join(folder, 'case', 'events.jsonl'), { recursive: true }),
    findings: [{ code: 'unreadable_file', message: /directory/ }],
  },
  {
    name: 'a link to outside the folder named events.jsonl',
    write: (folder, outside) => {
      const target = path.join(outside, 'secret.jsonl');
      writeFileSync(target, started('outside') + '\n');
      mkdirSync(path.join(folder, 'case'));
      symlinkSync(target, path.join(folder, 'case', 'events.jsonl'));
    },
    findings: [{ code: 'unreadable_file', message: /link/ }],
  },
  {
    name: 'timestamps that go backwards',
    write: (folder) =>
      write(
        folder,
        'case/events.jsonl',
        [
          started('case'),
          ev(2, 'case', 'model_responded', { content: 'b' }, '2020-01-01T00:00:00.000Z'),
          ev(3, 'case', 'model_responded', { content: 'c' }, '2010-01-01T00:00:00.000Z'),
        ].join('\n') + '\n',
      ),
    // seq alone orders events (README): a clock that goes back is what the file says, no finding.
    findings: [],
    run: { id: 'case', seqs: [1, 2, 3] },
    check: (es) => {
      if (es[2]!.at !== '2010-01-01T00:00:00.000Z') throw new Error('the timestamp was not kept as written');
    },
  },
  {
    name: 'timestamps that are numbers',
    write: around(ev(2, 'case', 'model_responded', { content: 'b' }, 1764403200000)),
    findings: [{ code: 'invalid_event', line: 2, message: /at must be a non-empty string/ }],
    run: { id: 'case', seqs: [1, 2, 3] },
  },
  {
    name: 'timestamps that are not dates',
    write: around(ev(2, 'case', 'model_responded', { content: 'b' }, 'yesterday, after lunch')),
    findings: [],
    run: { id: 'case', seqs: [1, 2, 3] },
    check: (es) => {
      if (es.find((e) => e.seq === 2)!.at !== 'yesterday, after lunch')
        throw new Error('at not kept as written');
    },
  },
];
