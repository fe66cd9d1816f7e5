/**
 * The run's model gateway: an origin server on 127.0.0.1 (random port) that speaks an agent's
 * model API and takes the answers from a source. One dialect per API (anthropic.ts: Messages;
 * responses.ts: OpenAI Responses), one source per origin of answers (sim, replay, upstream).
 *
 *   agent ──HTTP(S)SE──▶ gateway (server.ts) ── Dialect.parse ──▶ lane, turn, tool results
 *                           │                                       │
 *                           │◀── Source.answer(request) ────────────┘  (ModelAnswer, or raw bytes)
 *                           └── Dialect.render → SSE to the agent; the exchange is recorded
 *
 * A dialect is pure: it never touches the network or the ledger. The server checks the per-run
 * token (`Dialect.token` says where the agent puts its key: `x-api-key`, `Authorization: Bearer`),
 * answers 401 without it, and records every exchange (request and streamed answer, content-addressed
 * artifacts, redacted) through the `onExchange` callback of the host, which appends the events.
 */

/** A tool call the model makes. `id` is the API's call id (tool_use id / call_id). */
export interface ToolCallOut {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /**
   * `custom`: a freeform tool of the Responses API (Codex's apply_patch), whose call carries text,
   * not JSON arguments; the text is `input.input`. Absent: a function / tool_use call.
   */
  kind?: 'custom';
}

/** One answer of the model, API-neutral. */
export interface ModelAnswer {
  text: string;
  calls: ToolCallOut[];
  stop: 'end_turn' | 'tool_use' | 'max_tokens';
  usage: { input_tokens: number; output_tokens: number };
  model: string;
}

/** A tool result the request carries back to the model (the observation of a call). */
export interface ToolResultIn {
  call_id: string;
  output: string;
  is_error: boolean;
  /** The tool was still running when the agent gave its output back (Codex's exec_command past its yield time). */
  running?: boolean;
}

/**
 * What a request is, API-neutral. `lane` is what the request is, not when it came: `main` (the
 * agent's conversation), `sub:<key>` (a subagent's, keyed by the prompt that started it), `side`
 * (a call without tools: titles, summaries, quota checks); answers are served in order per lane.
 */
export interface ParsedRequest {
  lane: string;
  model: string;
  stream: boolean;
  /** Assistant turns already in the conversation. */
  turn: number;
  /** Tool results in the last user message. */
  results: ToolResultIn[];
  /** The first user message's text (a subagent's prompt), for the sim source. */
  prompt: string;
  /** The agent's version as its request says (user agent), when it says. */
  agentVersion: string | null;
}

/** Named parts of a request whose change is a `request` cause (system prompt, tools, instructions). */
export interface CanonicalRequest {
  /** Everything but the conversation, normalised: model, system, tools, settings. */
  head: unknown;
  /** The conversation's messages, normalised, in order. */
  messages: unknown[];
}

/**
 * What is run-specific, for normaliseText (canonical.ts): each value found in a text is replaced by
 * its placeholder before a digest that runs are compared by is taken.
 */
export interface NormaliseContext {
  workspace: string;
  home: string;
  /** The run's folder, `<folder>/<run>` (TMPDIR and anything else the run keeps there). */
  runDir?: string;
  /** The run's id (named in its folder, and wherever the run names itself). */
  runId?: string;
  /** The per-run token (the agent's key slot and its hook environment hold it). */
  token?: string;
  /** The gateway's URL (a random port), as the agent's environment names it. */
  gateway?: string;
}

export interface Dialect {
  name: 'anthropic' | 'responses';
  /** The model route a path is, or null (404). `count` routes are answered locally. */
  route(method: string, pathname: string): 'model' | 'count' | null;
  /** The key the agent sent, from where this API carries it. */
  token(headers: Record<string, string | string[] | undefined>): string | null;
  /** `runPrompt`: the run's prompt, which names the main lane (lanes.ts). */
  parse(
    body: unknown,
    headers: Record<string, string | string[] | undefined>,
    runPrompt: string,
  ): ParsedRequest;
  /**
   * The request with what differs between equal runs normalised (ids, dates, paths of the run,
   * cache hints, session and device ids); the list is in the dialect's file.
   */
  canonical(body: unknown, ctx: NormaliseContext): CanonicalRequest;
  /** Is a message of the conversation a tool result (and its text), for naming divergence causes. */
  toolResultOf(message: unknown): ToolResultIn[];
  /** The answer as this API's response: SSE events (stream) or one JSON body. */
  render(answer: ModelAnswer, messageId: string, stream: boolean): { contentType: string; body: string };
  /** The answer a recorded or upstream response body holds (SSE or JSON). */
  parseAnswer(body: string): ModelAnswer;
  /** An error body in this API's shape (e.g. 400 invalid_request_error). */
  error(type: string, message: string): string;
  /** Body of a count route (count_tokens): an estimate, no model needed. */
  count(body: unknown): unknown;
  /** Upstream: where to forward, and the headers that carry the user's key. */
  upstream: {
    baseEnv: string;
    defaultBase: string;
    keyEnv: string[];
    authHeaders(key: string): Record<string, string>;
  };
}

/** Where answers come from. */
export interface AnswerSource {
  kind: 'sim' | 'replay' | 'upstream';
  /**
   * The answer to a request: a model answer (rendered by the dialect), raw bytes to send as they are
   * (a recording, an upstream stream), or `none` with why (the run records it and the agent gets an
   * error: a missing answer is never made up).
   */
  answer(req: SourceRequest): Promise<SourceAnswer>;
}

export interface SourceRequest {
  parsed: ParsedRequest;
  body: unknown;
  rawBody: Buffer;
  canonical: CanonicalRequest;
  /** Index of this request in its lane (0-based). */
  index: number;
  headers: Record<string, string | string[] | undefined>;
  /** The request's path and query, as the agent sent them. */
  path: string;
  /** For upstream: start the agent's response, then stream the answer's bytes as they come. */
  start?: (status: number, contentType: string) => void;
  write?: (chunk: Buffer) => void;
}

export type SourceAnswer =
  | { type: 'answer'; answer: ModelAnswer }
  | {
      type: 'raw';
      status: number;
      contentType: string;
      body: string;
      /** The bytes were written through `write` already (streamed upstream). */
      streamed?: boolean;
    }
  | {
      type: 'none';
      /** Why there is no answer: divergence (replay), exhausted, upstream_error, budget. */
      reason: string;
      cause?: DivergenceCause;
      detail?: Record<string, unknown>;
    };

/** The cause of a replay's first divergence (shared with divergence.ts). */
export type DivergenceCause = 'decision' | 'environment' | 'request' | 'structure' | 'agent_version';

/** One recorded exchange, as the host stores it (model_responded.exchange). */
export interface ExchangeRecord {
  lane: string;
  index: number;
  request: { digest: string; canonical: string; bytes: number };
  answer: { digest: string; bytes: number; status: number };
  source: AnswerSource['kind'];
}
