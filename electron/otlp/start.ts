import { randomBytes } from 'node:crypto';
import type { ProofloopService } from '../service/service';
import { startOtlpReceiver, type OtlpReceiver } from './server';

export interface StartedOtlp {
  receiver: OtlpReceiver | null;
  /** What `serve` prints (and --json gives): the endpoint and headers for the two OTEL_ variables. */
  info:
    { endpoint: string; port: number; token: string | null; env: Record<string, string> } | { error: string };
}

/**
 * The receiver for an app or `serve` process, appending to whatever folder its service has open.
 * A port already taken (a collector on 4318) is reported, not fatal: the inspector still serves.
 */
export async function startOtlpFor(
  svc: ProofloopService,
  opts: { port?: number; token?: string | true | null } = {},
): Promise<StartedOtlp> {
  const token =
    opts.token === true
      ? randomBytes(18).toString('base64url')
      : (opts.token ?? process.env.PROOFLOOP_OTLP_TOKEN ?? null);
  const idle = Number(process.env.PROOFLOOP_OTLP_IDLE_MS);
  try {
    const receiver = await startOtlpReceiver({
      ledger: () => svc.ctx.ledger(),
      // A team ledger (postgres://…) takes the records through the engine interface.
      engine: () => {
        try {
          return svc.ctx.sqlite() ? null : svc.ctx.engine();
        } catch {
          return null; // nothing open: ledger() says so (503)
        }
      },
      port: opts.port ?? 4318,
      token,
      ...(Number.isFinite(idle) && idle > 0 ? { idleMs: idle } : {}),
    });
    const env: Record<string, string> = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
    if (token) env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer%20${token}`;
    return { receiver, info: { endpoint: receiver.endpoint, port: receiver.port, token, env } };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? `port ${opts.port ?? 4318} is in use (--otlp-port to pick another)`
        : (e as Error).message;
    return { receiver: null, info: { error: why } };
  }
}

export function otlpLine(o: StartedOtlp): string {
  if ('error' in o.info) return `OTLP receiver not started: ${o.info.error}`;
  const env = Object.entries(o.info.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return `OTLP endpoint ${o.info.endpoint} (/v1/traces, /v1/logs): ${env}`;
}
