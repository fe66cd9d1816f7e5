import { storeArtifact } from '../ledger/artifact-store';
import { dict } from '../../shared/dict.js';

/** Request keys stored one artifact per element: the history each request resends is stored once. */
const LIST_KEYS = new Set(['messages', 'input']);

/** Stores a JSON request as a manifest of content-addressed parts; returns the manifest's artifact. */
export function storeParts(
  runDir: string,
  value: Record<string, unknown>,
): { digest: string; bytes: number } {
  const manifest: Record<string, unknown> = dict();
  let bytes = 0;
  for (const [k, v] of Object.entries(value)) {
    if (LIST_KEYS.has(k) && Array.isArray(v)) {
      manifest[k] = v.map((x) => {
        const a = storeArtifact(runDir, JSON.stringify(x), { redacted: true });
        bytes += a.bytes;
        return { $artifact: a.digest };
      });
    } else if (typeof v === 'object' && v !== null && JSON.stringify(v).length > 1024) {
      const a = storeArtifact(runDir, JSON.stringify(v), { redacted: true });
      bytes += a.bytes;
      manifest[k] = { $artifact: a.digest };
    } else manifest[k] = v;
  }
  const m = storeArtifact(runDir, JSON.stringify(manifest), { redacted: true });
  return { digest: m.digest, bytes: bytes + m.bytes };
}
