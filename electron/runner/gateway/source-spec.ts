/**
 * An answer source described by data, so the gateway's thread (thread.ts, worker.ts) can build it
 * there: the run's thread holds the ledger, the gateway's thread only answers. The same function
 * builds it in the run's thread when no worker can start.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { redactCredentials } from '../../../shared/redact';
import { realAgent } from '../agents/registry';
import { replaySource, type RecordedRun } from './replay-source';
import { simSource, type SimSourceOptions } from './sim-source';
import type { AnswerSource, Dialect, NormaliseContext } from './types';
import { upstreamSource } from './upstream-source';

export type SourceSpec =
  | { kind: 'sim'; options: Omit<SimSourceOptions, 'tools'> }
  | {
      kind: 'replay';
      recorded: RecordedRun;
      /** The recorded run's artifacts folder. */
      artifacts: string;
      /** The live agent's version (known before the gateway starts). */
      version: string;
      workspace: string;
      home: string;
      /** What is run-specific in this run; its `gateway` is set once the gateway listens. */
      ctx: NormaliseContext;
    }
  | {
      kind: 'upstream';
      /**
       * The variables the dialect names (key, base URL), picked from ProofLoop's environment by the
       * run's thread: held in memory only, never written.
       */
      env: Record<string, string>;
    };

/** The variables of `env` an upstream source of `dialect` reads. */
export function upstreamEnv(dialect: Dialect, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const k of [...dialect.upstream.keyEnv, dialect.upstream.baseEnv]) {
    const v = env[k];
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** Tells a spec's source the gateway's URL (run-specific: normalised in what a replay compares). */
export function setGatewayUrl(spec: SourceSpec, url: string): void {
  if (spec.kind === 'replay') spec.ctx.gateway = url;
}

/** The source a spec describes, for the agent named (its dialect and sim tools). */
export function buildSource(agentName: string, spec: SourceSpec): { dialect: Dialect; source: AnswerSource } {
  const agent = realAgent(agentName);
  const dialect = agent.dialect;
  switch (spec.kind) {
    case 'sim':
      return { dialect, source: simSource({ ...spec.options, tools: agent.sim }) };
    case 'upstream':
      return { dialect, source: upstreamSource(dialect, spec.env) };
    case 'replay':
      return {
        dialect,
        source: replaySource({
          dialect,
          recorded: spec.recorded,
          readArtifact: (d) => readFileSync(path.join(spec.artifacts, d), 'utf8'),
          version: () => spec.version,
          redact: (v) => redactCredentials(v).value,
          workspace: spec.workspace,
          home: spec.home,
          ctx: spec.ctx,
        }),
      };
  }
}
