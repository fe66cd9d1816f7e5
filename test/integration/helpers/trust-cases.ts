import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  openSync,
  closeSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { ZERO_HASH, canonicalJson, chainLink, eventDigest } from '../../../shared/protocol';

/**
 * Issue 24's fuzz classes: valid files that nobody here wrote and that once made ProofLoop cry wolf
 * (a false chain_broken) or lose a run without a word. Each case writes several variants of its
 * class into one folder and says, per run, what it must be: its stored id, the id its source gives
 * it, its seqs and the findings it deserves (none, for a valid one).
 */
export interface TrustRun {
  /** The file's key in the folder (as `runs[].origin` and findings name it). */
  file: string;
  /** The run id as the file names it (`meta.source_run_id` when it is stored under another id). */
  source: string;
  /** The run's seqs as stored. */
  seqs: number[];
  /** Findings it deserves (none for a valid run): code, and its line or message. */
  findings?: Expected[];
}

export interface Expected {
  code: string;
  line?: number;
  message?: RegExp;
}

export interface TrustCase {
  name: string;
  /** Writes the case's files into `dir` (a folder of its own, or a part of a shared folder). */
  write(dir: string): void;
  /** An edit after the first open (a second open follows). */
  edit?(dir: string): void;
  runs: TrustRun[];
  /** Findings on no run (entries that made no run), by file key relative to `dir`. */
  folderFindings?: (Expected & { file: string })[];
  /** Checks on a run's events as `events --json` prints them. */
  check?: (source: string, events: { seq: number; kind: string; payload: Record<string, unknown> }[]) => void;
}

/** The members of Object.prototype: every name that a plain `{}` answers before anything is stored. */
export const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
const KIND_RE = /^[a-z][a-z0-9_]{0,63}$/;

const at = (s: number) =>
  `2026-11-29T08:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}.000Z`;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** Writes `data` at `rel` below `dir`; `rel` as bytes for names that are not UTF-8. */
function put(dir: string, rel: string | Buffer, data: string | Buffer): void {
  const bytes = Buffer.concat([Buffer.from(dir + '/'), typeof rel === 'string' ? Buffer.from(rel) : rel]);
  mkdirSync(bytes.subarray(0, bytes.lastIndexOf(47)), { recursive: true });
  writeFileSync(bytes, data);
}

/** A payload for seq `s` of a plain run: run_started first, then model responses. */
const payloadAt = (s: number): Record<string, unknown> =>
  s === 1 ? { task_id: 't', goal: 'g', agent: { name: 'fz' } } : { content: `step ${s}` };
const kindAt = (s: number) => (s === 1 ? 'run_started' : 'model_responded');

/** Seed 000 lines of run `id`, seqs 1..n. */
export function seed000(id: string, n = 3): string {
  const lines: string[] = [];
  for (let s = 1; s <= n; s++)
    lines.push(JSON.stringify({ seq: s, run_id: id, kind: kindAt(s), at: at(s), payload: payloadAt(s) }));
  return lines.join('\n') + '\n';
}

/** ProofLoop's own chained lines of run `id`, seqs 1..n, as its writer makes them. */
export function chained(
  id: string,
  n = 3,
  payloads: (s: number) => Record<string, unknown> = payloadAt,
): string[] {
  const lines: string[] = [];
  let prev = ZERO_HASH;
  for (let s = 1; s <= n; s++) {
    const e = { seq: s, run_id: id, kind: kindAt(s), v: 1, at: at(s), payload: payloads(s) };
    const hash = chainLink(prev, eventDigest(e, sha256), sha256);
    lines.push(JSON.stringify({ ...e, prev, hash }));
    prev = hash;
  }
  return lines;
}

/** A chained line whose payload nests `depth` deep (its hash is over its content, as a writer's would be). */
export function chainedDeep(
  id: string,
  n: number,
  deepAt: number,
  depth: number,
  shape: 'objects' | 'arrays',
): string {
  const [open, close] = shape === 'objects' ? ['{"a":', '}'] : ['[', ']'];
  const deepJson = open.repeat(depth) + '1' + close.repeat(depth);
  const lines: string[] = [];
  let prev = ZERO_HASH;
  for (let s = 1; s <= n; s++) {
    const kind = s === 1 ? 'run_started' : 'context_updated';
    const payloadJson =
      s === deepAt
        ? `{"op":"set","x":${deepJson}}`
        : canonicalJson(s === 1 ? payloadAt(1) : { op: 'set', n: s });
    // digest = sha256(JCS({at, kind, payload, run_id, seq, v})): written out, as the payload is too
    // deep for any canonicaliser here (its keys are in order already, its numbers canonical).
    const digest = sha256(
      `{"at":${JSON.stringify(at(s))},"kind":"${kind}","payload":${payloadJson},"run_id":${JSON.stringify(id)},"seq":${s},"v":1}`,
    );
    const hash = chainLink(prev, digest, sha256);
    lines.push(
      `{"seq":${s},"run_id":${JSON.stringify(id)},"kind":"${kind}","v":1,"at":${JSON.stringify(at(s))},"payload":${payloadJson},"prev":"${prev}","hash":"${hash}"}`,
    );
    prev = hash;
  }
  return lines.join('\n') + '\n';
}

const ODD_IDS: [string, string][] = [
  ['nul', 'a\u0000b'],
  ['nul-only', '\u0000'],
  ['surrogate-high', 'a\ud800b'],
  ['surrogate-low', '\udfff'],
  ['chars-201', 'r'.repeat(201)],
  ['chars-10000', 'q'.repeat(10_000)],
  ['dotdot', '../x'],
  ['windows', 'C:\\x'],
  ['dash', '-rf'],
  ['absolute', '/etc/passwd'],
];

function idCases(): TrustCase[] {
  const seedRuns: TrustRun[] = [
    ...ODD_IDS.map(([dir, id]) => ({ file: `${dir}/events.jsonl`, source: id, seqs: [1, 2, 3] })),
    // x/y sanitises to x_y, which another file names: one of them becomes x_y:2.
    { file: 'slash/events.jsonl', source: 'x/y', seqs: [1, 2, 3] },
    { file: 'underscore/events.jsonl', source: 'x_y', seqs: [1, 2, 3] },
    // Two files of one run id: the second is stored as dup:2.
    { file: 'dup-a/events.jsonl', source: 'dup', seqs: [1, 2, 3] },
    { file: 'dup-b/events.jsonl', source: 'dup', seqs: [1, 2, 3] },
  ];
  const chainedIds = ODD_IDS.filter(([, id]) => id.length <= 200);
  const chainRuns: TrustRun[] = [
    ...chainedIds.map(([dir, id]) => ({ file: `${dir}/events.jsonl`, source: id, seqs: [1, 2, 3, 4] })),
    { file: 'slash/events.jsonl', source: 'x/y', seqs: [1, 2, 3, 4] },
    { file: 'underscore/events.jsonl', source: 'x_y', seqs: [1, 2, 3, 4] },
    { file: 'dup-a/events.jsonl', source: 'dup', seqs: [1, 2, 3, 4] },
    { file: 'dup-b/events.jsonl', source: 'dup', seqs: [1, 2, 3, 4] },
    // ProofLoop's envelope bounds run_id to 200 characters: a finding per line, the chain intact.
    ...[201, 10_000].map((n) => ({
      file: `chars-${n}/events.jsonl`,
      source: 'c'.repeat(n),
      seqs: [1, 2, 3, 4],
      findings: [1, 2, 3, 4].map((line) => ({
        code: 'invalid_event',
        line,
        message: /run_id must be a string of 1 to 200/,
      })),
    })),
  ];
  const aggregates = [...ODD_IDS.map(([, id]) => id), 'x/y', 'x_y'];
  return [
    {
      name: 'seed 000 run ids that cannot be used as is',
      write: (dir) => {
        for (const r of seedRuns) put(dir, r.file, seed000(r.source));
      },
      runs: seedRuns,
    },
    {
      name: 'chained run ids that cannot be used as is',
      write: (dir) => {
        for (const r of chainRuns) put(dir, r.file, chained(r.source, 4).join('\n') + '\n');
      },
      runs: chainRuns,
    },
    {
      name: 'seed 004 aggregate ids that cannot be used as is',
      write: (dir) => {
        const lines: string[] = [];
        aggregates.forEach((a, i) => {
          lines.push(
            JSON.stringify({
              event_id: `e${i}-1`,
              event_type: 'agent_started',
              aggregate_id: a,
              timestamp: at(1),
              version: 1,
              payload: { task_id: 't' },
            }),
            JSON.stringify({
              event_id: `e${i}-2`,
              event_type: 'model_response',
              aggregate_id: a,
              timestamp: at(2),
              version: 2,
              payload: { content: 'x' },
            }),
          );
        });
        put(dir, 'store/events.jsonl', lines.join('\n') + '\n');
      },
      runs: aggregates.map((a) => ({ file: 'store/events.jsonl', source: a, seqs: [1, 2] })),
    },
  ];
}

function protoCases(): TrustCase[] {
  const asRunIds: TrustRun[] = PROTO_NAMES.flatMap((name) => [
    { file: `seed-${name}/events.jsonl`, source: name, seqs: [1, 2, 3] },
    { file: `chained-${name}/events.jsonl`, source: name, seqs: [1, 2, 3] },
  ]);
  // One run whose kinds, payload keys and call ids are every Object.prototype name.
  const kindsLines = (): string => {
    const lines = [
      JSON.stringify({ seq: 1, run_id: 'names', kind: 'run_started', at: at(1), payload: payloadAt(1) }),
    ];
    let s = 1;
    const push = (kind: string, payload: Record<string, unknown>) =>
      lines.push(JSON.stringify({ seq: ++s, run_id: 'names', kind, at: at(s), payload }));
    const keys = Object.fromEntries(PROTO_NAMES.map((n) => [n, { [n]: n }]));
    for (const name of PROTO_NAMES) {
      push(name, { [name]: 1 });
      push('model_proposed', { call_id: name, tool: name, args: { [name]: name } });
      push('tool_invoked', { call_id: name, tool: name, args: keys });
      push('tool_returned', { call_id: name, status: 'ok', duration_ms: 1, [name]: name });
      push('file_changed', { path: name, before: null, after: sha256(name), patch: name });
    }
    push('context_updated', { op: 'set', ...keys, files: keys });
    return lines.join('\n') + '\n';
  };
  const kindsCount = 1 + PROTO_NAMES.length * 5 + 1;
  return [
    {
      name: 'every Object.prototype name as a run id',
      write: (dir) => {
        for (const name of PROTO_NAMES) {
          put(dir, `seed-${name}/events.jsonl`, seed000(name));
          put(dir, `chained-${name}/events.jsonl`, chained(name, 3).join('\n') + '\n');
        }
      },
      runs: asRunIds,
    },
    {
      name: 'every Object.prototype name as a kind, a payload key and a call id',
      write: (dir) => put(dir, 'names/events.jsonl', kindsLines()),
      runs: [
        {
          file: 'names/events.jsonl',
          source: 'names',
          seqs: Array.from({ length: kindsCount }, (_, i) => i + 1),
          // A kind that is no snake_case name is stored as written, with its finding.
          findings: PROTO_NAMES.flatMap((name, i) =>
            KIND_RE.test(name) ? [] : [{ code: 'invalid_event', line: 2 + i * 5, message: /snake_case/ }],
          ),
        },
      ],
      check: (_src, events) => {
        for (const [i, name] of PROTO_NAMES.entries()) {
          const e = events[1 + i * 5]!;
          if (e.kind !== name || !Object.prototype.hasOwnProperty.call(e.payload, name))
            throw new Error(`the kind or key ${name} was not kept: ${JSON.stringify(e)}`);
        }
        const last = events.at(-1)!.payload;
        for (const name of PROTO_NAMES)
          if (!Object.prototype.hasOwnProperty.call(last, name)) throw new Error(`the key ${name} was lost`);
      },
    },
  ];
}

/** A name of raw bytes below `dir` (Latin-1, not UTF-8). */
const latin1 = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

function nameCases(): TrustCase[] {
  const good: [string, string][] = [
    ['new\nline', 'nl'],
    ['back\\slash', 'bs'],
    [' leading space', 'sp'],
    ['-rf', 'rf'],
    ['n'.repeat(255), 'long'],
    ['é-utf8', 'utf8'],
  ];
  return [
    {
      name: 'file and folder names that are not UTF-8, beside odd ones that are',
      write: (dir) => {
        for (const [folder, id] of good) put(dir, `${folder}/events.jsonl`, seed000(id));
        // A folder of Latin-1 bytes, a file of Latin-1 bytes, and a run below a Latin-1 folder.
        put(dir, latin1([0xff, 0xfe], '-latin1-', [0xe9], '/events.jsonl'), seed000('lat1'));
        put(dir, latin1('files/', [0xe9], 'v', [0xe9], 'nement.jsonl'), chained('lat2').join('\n') + '\n');
        put(dir, latin1([0xe0], '/runs/inner/events.jsonl'), seed000('lat3'));
      },
      runs: good.map(([folder, id]) => ({ file: `${folder}/events.jsonl`, source: id, seqs: [1, 2, 3] })),
      folderFindings: [
        { file: '\\xff\\xfe-latin1-\\xe9/events.jsonl', code: 'unreadable_file', message: /not UTF-8/ },
        { file: 'files/\\xe9v\\xe9nement.jsonl', code: 'unreadable_file', message: /not UTF-8/ },
        { file: '\\xe0/runs/inner/events.jsonl', code: 'unreadable_file', message: /not UTF-8/ },
      ],
    },
    {
      name: 'a folder whose path is too long for the platform to open',
      write: (dir) => {
        // Made one level at a time from the level above (a path over PATH_MAX cannot be named whole,
        // and the shell's cd names it whole: perl's chdir goes down by the name of one level).
        const script =
          'my ($dir, $text) = @ARGV; chdir $dir or die; mkdir "deep"; chdir "deep" or die;' +
          ' for (1..18) { mkdir "d" x 250 or die; chdir "d" x 250 or die }' +
          ' open my $f, ">", "events.jsonl" or die; print $f $text; close $f;';
        mkdirSync(dir, { recursive: true });
        execFileSync('perl', ['-e', script, dir, seed000('toolong')]);
      },
      runs: [],
      // The first folder the platform cannot name: its key starts with deep/ and it is reported.
      folderFindings: [
        { file: 'deep/', code: 'unreadable_file', message: /cannot be listed \(ENAMETOOLONG\)/ },
      ],
    },
  ];
}

function deepCases(): TrustCase[] {
  const out: TrustCase[] = [];
  const variants: [string, number, number, 'objects' | 'arrays', number][] = [
    ['seq 2 of 4, 5,000 deep objects', 4, 2, 'objects', 5_000],
    ['seq 2 of 4, 100,000 deep arrays', 4, 2, 'arrays', 100_000],
    ['seq 1 of 3, 5,000 deep arrays', 3, 1, 'arrays', 5_000],
    ['the last of 3, 1,000 deep objects', 3, 3, 'objects', 1_000],
  ];
  const runs: TrustRun[] = variants.map(([, n, deepAt], i) => ({
    file: `deep-${i}/events.jsonl`,
    source: `deep${i}`,
    seqs: Array.from({ length: n }, (_, k) => k + 1).filter((s) => s !== deepAt),
    findings: [{ code: 'invalid_event', line: deepAt, message: /deeper than 256.*could not be checked/ }],
  }));
  out.push({
    name: 'deep lines inside chained files',
    write: (dir) =>
      variants.forEach(([, n, deepAt, shape, depth], i) =>
        put(dir, `deep-${i}/events.jsonl`, chainedDeep(`deep${i}`, n, deepAt, depth, shape)),
      ),
    runs,
  });
  return out;
}

/**
 * In-place edits after an import: the first byte, a line past the first 4 KiB, the last line; with
 * and without lines appended after; with the size unchanged. Each file is a sealed (seed 000) run
 * of 100 lines of ~90 bytes (~9 KiB).
 */
function rewriteCases(): TrustCase[] {
  const N = 100;
  const APPENDED = 5;
  const file = (i: number) => `edit-${i}/events.jsonl`;
  const original = (id: string) => seed000(id, N);
  const appended = (id: string) =>
    Array.from({ length: APPENDED }, (_, k) =>
      JSON.stringify({
        seq: N + k + 1,
        run_id: id,
        kind: 'model_responded',
        at: at(N + k + 1),
        payload: payloadAt(N + k + 1),
      }),
    ).join('\n') + '\n';
  /** Replaces one character of line `line` (1-based) in place, keeping the size. */
  const editLine = (text: string, line: number, from: string, to: string): string => {
    const lines = text.split('\n');
    if (!lines[line - 1]!.includes(from)) throw new Error(`line ${line} has no ${from}`);
    lines[line - 1] = lines[line - 1]!.replace(from, to);
    return lines.join('\n');
  };
  const variants: { what: string; line: number; from: string; to: string; append: boolean }[] = [
    { what: 'the first byte', line: 1, from: '{"seq"', to: ' "seq"', append: false },
    {
      what: 'line 80, past the first 4 KiB, then 5 lines appended',
      line: 80,
      from: 'step 80',
      to: 'stop 80',
      append: true,
    },
    {
      what: 'line 80, past the first 4 KiB, the size unchanged',
      line: 80,
      from: 'step 80',
      to: 'stop 80',
      append: false,
    },
    {
      what: 'the last line, then 5 lines appended',
      line: N,
      from: `step ${N}`,
      to: `stop ${N}`,
      append: true,
    },
    { what: 'the last line, the size unchanged', line: N, from: `step ${N}`, to: `stip ${N}`, append: false },
  ];
  return [
    {
      name: 'files edited in place after their import',
      write: (dir) => {
        variants.forEach((_, i) => put(dir, file(i), original(`edit${i}`)));
        put(dir, 'grown/events.jsonl', original('grown'));
      },
      edit: (dir) => {
        variants.forEach((v, i) => {
          const f = path.join(dir, file(i));
          const text = editLine(readFileSync(f, 'utf8'), v.line, v.from, v.to);
          if (Buffer.byteLength(text) !== Buffer.byteLength(original(`edit${i}`)))
            throw new Error('size changed');
          const fd = openSync(f, 'r+');
          writeSync(fd, text, 0, 'utf8');
          closeSync(fd);
          if (v.append) appendFileSync(f, appended(`edit${i}`));
          else bumpMtime(f);
        });
        // A file that only grew: its new lines are imported, nothing to say.
        appendFileSync(path.join(dir, 'grown/events.jsonl'), appended('grown'));
      },
      runs: [
        ...variants.map((v, i) => ({
          file: file(i),
          source: `edit${i}`,
          // The lines already imported are kept as they were; nothing after the edit is read.
          seqs: Array.from({ length: N }, (_, k) => k + 1),
          findings: [{ code: 'file_rewritten', message: new RegExp(`line ${v.line}\\b`) }],
        })),
        {
          file: 'grown/events.jsonl',
          source: 'grown',
          seqs: Array.from({ length: N + APPENDED }, (_, k) => k + 1),
        },
      ],
    },
  ];
}

/** A size-keeping edit made within the same second as the import would keep mtime's seconds: move it on. */
function bumpMtime(file: string): void {
  execFileSync('touch', ['-d', '@' + String(Math.floor(Date.now() / 1000) + 5), file]);
}

export const TRUST_CASES: TrustCase[] = [
  ...idCases(),
  ...protoCases(),
  ...nameCases(),
  ...deepCases(),
  ...rewriteCases(),
];
