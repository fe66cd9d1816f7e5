import { canonicalJson } from '../../shared/protocol';
import { sha256Hex } from '../crypto';

/**
 * digest = sha256(JCS({seq, run_id, kind, v, at, payload})), as `eventDigest` of shared/protocol,
 * without building the wrapper object: its keys are written in their sorted order around the
 * payload's canonical JSON (the integration spec checks both agree on random events).
 */
export function fastDigest(
  seq: number,
  runId: string,
  kind: string,
  v: number,
  at: string,
  payload: unknown,
): string {
  return sha256Hex(
    '{"at":' +
      JSON.stringify(at) +
      ',"kind":' +
      JSON.stringify(kind) +
      ',"payload":' +
      canonicalJson(payload) +
      ',"run_id":' +
      JSON.stringify(runId) +
      ',"seq":' +
      JSON.stringify(seq) +
      ',"v":' +
      JSON.stringify(v) +
      '}',
  );
}

/** hash = sha256(prev + digest) */
export function link(prev: string, digest: string): string {
  return sha256Hex(prev + digest);
}
