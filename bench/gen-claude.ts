/**
 * Generated Claude Code sessions, shaped as the real ones in test/fixtures/claude-code/projects:
 * the 2.1 envelope (parentUuid chain, sessionId, cwd, version, gitBranch, uuid, timestamp), a user
 * prompt, one API response split over lines that share `message.id` (thinking, text, tool_use), a
 * PreToolUse progress line, the tool_result with its `toolUseResult`, file-history-snapshot and
 * queue-operation lines. A big session also carries multi-MB lines: a pasted screenshot (a base64
 * image block) and a large tool output. Deterministic for a seed.
 */
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../shared/prng';

const hex = (r: () => number, n: number) => {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(r() * 16).toString(16);
  return s;
};
export const uuidOf = (r: () => number) =>
  `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-a${hex(r, 3)}-${hex(r, 12)}`;

const WORDS =
  'the test fails because discount is applied twice in price so we read the module then patch the call and run pytest again until every case passes with the fixture data from config'.split(
    ' ',
  );
/** A pool of texts of varied length, built once: picking from it keeps a 1 GB generator fast. */
function textPool(r: () => number, n: number, min: number, max: number): string[] {
  return Array.from({ length: n }, () => {
    const len = min + Math.floor(r() * (max - min));
    let s = '';
    while (s.length < len) s += WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.08 ? '.\n' : ' ');
    return s;
  });
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Built once for all sessions: 10,000 small sessions must not each build their own. */
let shared: Record<'prompts' | 'thoughts' | 'texts' | 'outputs', string[]> & { blob: string };
function pools() {
  if (!shared) {
    const r = mulberry32(0x5eed);
    shared = {
      prompts: textPool(r, 64, 40, 400),
      thoughts: textPool(r, 64, 200, 1500),
      texts: textPool(r, 64, 80, 800),
      outputs: textPool(r, 64, 200, 3000),
      blob: Array.from({ length: 1 << 16 }, () => BASE64[Math.floor(r() * 64)]).join(''),
    };
  }
  return shared;
}

export interface SessionOptions {
  sessionId: string;
  cwd: string;
  /** Conversation turns (about 9 lines each, plus a snapshot line per turn). */
  turns?: number;
  /** Stop at about this many bytes instead of a number of turns. */
  bytes?: number;
  seed?: number;
  /** Every `bigEvery` turns one multi-MB line (alternately an image and a tool output); 0: none. */
  bigEvery?: number;
  /** Sizes of the multi-MB lines, cycled. */
  bigSizes?: number[];
}

/** Writes one session file; returns its size and line count. */
export function writeClaudeSession(file: string, o: SessionOptions): { bytes: number; lines: number } {
  mkdirSync(path.dirname(file), { recursive: true });
  const r = mulberry32(o.seed ?? 1);
  const { prompts, thoughts, texts, outputs, blob } = pools();
  const big = (n: number) => blob.repeat(Math.ceil(n / blob.length)).slice(0, n);
  const pick = (xs: string[]) => xs[Math.floor(r() * xs.length)]!;

  const fd = openSync(file, 'w');
  let buf: string[] = [];
  let bufLen = 0;
  let written = 0;
  let lines = 0;
  const put = (rec: Record<string, unknown>) => {
    const s = JSON.stringify(rec) + '\n';
    buf.push(s);
    bufLen += s.length;
    lines += 1;
    if (bufLen >= 4 << 20) flush();
  };
  const flush = () => {
    if (!buf.length) return;
    written += writeSync(fd, buf.join(''));
    buf = [];
    bufLen = 0;
  };

  let clock = Date.parse('2026-02-10T09:00:00.000Z');
  const ts = () => new Date((clock += 200 + Math.floor(r() * 4000))).toISOString();
  let parent: string | null = null;
  const env = (type: string) => {
    const uuid = uuidOf(r);
    const rec = {
      parentUuid: parent,
      isSidechain: false,
      userType: 'external',
      cwd: o.cwd,
      sessionId: o.sessionId,
      version: '2.1.38',
      gitBranch: 'main',
      type,
    };
    parent = uuid;
    return { rec, uuid };
  };
  const usage = () => ({
    input_tokens: 3 + Math.floor(r() * 50),
    cache_creation_input_tokens: Math.floor(r() * 8000),
    cache_read_input_tokens: 17000 + Math.floor(r() * 60000),
    output_tokens: 20 + Math.floor(r() * 900),
    service_tier: 'standard',
  });
  const assistant = (msgId: string, requestId: string, block: Record<string, unknown>) => {
    const { rec, uuid } = env('assistant');
    put({
      ...rec,
      message: {
        model: 'claude-opus-4-6',
        id: msgId,
        type: 'message',
        role: 'assistant',
        content: [block],
        stop_reason: null,
        stop_sequence: null,
        usage: usage(),
      },
      requestId,
      uuid,
      timestamp: ts(),
    });
    return uuid;
  };
  const tools = ['Read', 'Bash', 'Edit', 'Grep'] as const;
  const call = (t: number, k: number, bigOutput: number) => {
    const msgId = `msg_01${hex(r, 22)}`;
    const req = `req_011${hex(r, 21)}`;
    const toolId = `toolu_01${hex(r, 22)}`;
    const tool = tools[(t + k) % tools.length]!;
    const filePath = `${o.cwd}/src/price_${(t * 7 + k) % 41}.py`;
    const input =
      tool === 'Read'
        ? { file_path: filePath }
        : tool === 'Bash'
          ? { command: 'python -m pytest -q tests/', description: 'Run the tests' }
          : tool === 'Edit'
            ? { file_path: filePath, old_string: 'x * 0.9 * 0.9', new_string: 'x * 0.9' }
            : { pattern: 'discount', path: `${o.cwd}/src` };
    if (k === 0) assistant(msgId, req, { type: 'thinking', thinking: pick(thoughts), signature: hex(r, 96) });
    if (k === 0) assistant(msgId, req, { type: 'text', text: pick(texts) });
    const asstUuid = assistant(msgId, req, { type: 'tool_use', id: toolId, name: tool, input });
    const prog = env('progress');
    put({
      ...prog.rec,
      data: {
        type: 'hook_progress',
        hookEvent: 'PreToolUse',
        hookName: `PreToolUse:${tool}`,
        command: 'guard.sh',
      },
      toolUseID: toolId,
      parentToolUseID: toolId,
      uuid: prog.uuid,
      timestamp: ts(),
    });
    parent = asstUuid; // the result hangs off the call, as Claude Code writes it
    const content = bigOutput > 0 ? big(bigOutput) : pick(outputs);
    const res = env('user');
    put({
      ...res.rec,
      message: {
        role: 'user',
        content: [{ tool_use_id: toolId, type: 'tool_result', content, is_error: false }],
      },
      uuid: res.uuid,
      timestamp: ts(),
      toolUseResult:
        tool === 'Edit'
          ? {
              filePath,
              oldString: 'x * 0.9 * 0.9',
              newString: 'x * 0.9',
              structuredPatch: [
                {
                  oldStart: 3,
                  oldLines: 1,
                  newStart: 3,
                  newLines: 1,
                  lines: ['-    return x * 0.9 * 0.9', '+    return x * 0.9'],
                },
              ],
            }
          : { stdout: content.slice(0, 2000), stderr: '', interrupted: false, isImage: false },
      sourceToolAssistantUUID: asstUuid,
    });
  };

  const sizes = o.bigSizes ?? [2 << 20, 4 << 20, 6 << 20, 8 << 20];
  let bigN = 0;
  for (let t = 0; o.bytes !== undefined ? written + bufLen < o.bytes : t < (o.turns ?? 2); t++) {
    const promptUuid = uuidOf(r);
    put({
      type: 'file-history-snapshot',
      messageId: promptUuid,
      snapshot: { messageId: promptUuid, trackedFileBackups: {}, timestamp: new Date(clock).toISOString() },
      isSnapshotUpdate: false,
    });
    const bigTurn = o.bigEvery ? t % o.bigEvery === o.bigEvery - 1 : false;
    const bigSize = bigTurn ? sizes[bigN++ % sizes.length]! : 0;
    const image = bigTurn && bigN % 2 === 1;
    const { rec } = env('user');
    parent = promptUuid;
    put({
      ...rec,
      message: {
        role: 'user',
        content: image
          ? [
              { type: 'text', text: pick(prompts) },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: big(bigSize) } },
            ]
          : pick(prompts),
      },
      uuid: promptUuid,
      timestamp: ts(),
      permissionMode: 'default',
    });
    if (t % 5 === 4) {
      put({
        type: 'queue-operation',
        operation: 'enqueue',
        timestamp: ts(),
        sessionId: o.sessionId,
        content: '/cost',
      });
    }
    call(t, 0, bigTurn && !image ? bigSize : 0);
    call(t, 1, 0);
    assistant(`msg_01${hex(r, 22)}`, `req_011${hex(r, 21)}`, { type: 'text', text: pick(texts) });
  }
  flush();
  closeSync(fd);
  return { bytes: statSync(file).size, lines };
}
