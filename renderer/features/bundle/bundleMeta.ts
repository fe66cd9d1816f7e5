import type { RunSummary } from '../../api/types';

export type Integrity = 'ok' | 'failed';
export type Completeness = 'ok' | 'failed' | 'unknown';
export type Signature = 'valid' | 'invalid' | 'absent' | 'wrong_key';

export interface VerdictLike {
  ok: boolean;
  integrity: Integrity;
  completeness: Completeness;
  signature: Signature;
  signer: { fingerprint: string; pinned: boolean } | null;
  first_failure: { run_id: string | null; seq: number | null; reason: string } | null;
  findings: { run_id: string | null; seq: number | null; aspect: string; code: string; message: string }[];
}

/** What electron/bundle/open.ts keeps in `meta.bundle` of a run opened from a bundle. */
export interface BundleMeta {
  file: string;
  sha256: string;
  /** The run's id inside the bundle (the id here may carry a `:bundle-<hash>` suffix). */
  run_id: string;
  renamed_from: string | null;
  created_at: string;
  profile: string;
  verdict: VerdictLike;
  /** Where the run's chain comes from (shared/api/bundle.ts): its writer's, or ProofLoop's import's. */
  chain: 'source' | 'import';
  seal: { file: string; ranges: { from: number; to: number; sha256: string }[] } | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);
const oneOf = <T extends string>(v: unknown, allowed: readonly T[], d: T): T =>
  allowed.includes(v as T) ? (v as T) : d;
const intOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);

/**
 * Reads `meta.bundle` defensively: meta is free-form, so anything missing or odd reads as the
 * least reassuring value (integrity failed, completeness unknown, signature absent).
 */
export function bundleMetaOf(run: RunSummary | undefined | null): BundleMeta | null {
  if (!run || run.source !== 'bundle') return null;
  const b = run.meta?.bundle;
  if (!isObj(b)) return null;
  const v = isObj(b.verdict) ? b.verdict : {};
  const ff = isObj(v.first_failure) ? v.first_failure : null;
  const signer = isObj(v.signer) ? v.signer : null;
  const inBundle = str(b.run_id, run.run_id);
  const runV = (Array.isArray(v.runs) ? v.runs : []).filter(isObj).find((r) => r.run_id === inBundle);
  const seal = runV && isObj(runV.seal) ? runV.seal : null;
  return {
    chain: runV?.chain === 'import' ? 'import' : 'source',
    seal: seal
      ? {
          file: str(seal.file),
          ranges: (Array.isArray(seal.ranges) ? seal.ranges : []).filter(isObj).map((r) => ({
            from: intOrNull(r.from) ?? 0,
            to: intOrNull(r.to) ?? 0,
            sha256: str(r.sha256),
          })),
        }
      : null,
    file: str(b.file),
    sha256: str(b.sha256),
    run_id: str(b.run_id, run.run_id),
    renamed_from: typeof b.renamed_from === 'string' ? b.renamed_from : null,
    created_at: str(b.created_at),
    profile: str(b.profile),
    verdict: {
      ok: v.ok === true,
      integrity: oneOf(v.integrity, ['ok', 'failed'] as const, 'failed'),
      completeness: oneOf(v.completeness, ['ok', 'failed', 'unknown'] as const, 'unknown'),
      signature: oneOf(v.signature, ['valid', 'invalid', 'absent', 'wrong_key'] as const, 'absent'),
      signer: signer ? { fingerprint: str(signer.fingerprint), pinned: signer.pinned === true } : null,
      first_failure: ff
        ? {
            run_id: typeof ff.run_id === 'string' ? ff.run_id : null,
            seq: intOrNull(ff.seq),
            reason: str(ff.reason),
          }
        : null,
      findings: (Array.isArray(v.findings) ? v.findings : []).filter(isObj).map((f) => ({
        run_id: typeof f.run_id === 'string' ? f.run_id : null,
        seq: intOrNull(f.seq),
        aspect: str(f.aspect, 'note'),
        code: str(f.code),
        message: str(f.message),
      })),
    },
  };
}

export type Tone = 'ok' | 'warn' | 'bad';

/** Green: everything proven. Red: something altered or a bad signature. Amber: intact, not all provable. */
export function verdictTone(v: Pick<VerdictLike, 'integrity' | 'completeness' | 'signature'>): Tone {
  if (v.integrity === 'failed' || v.completeness === 'failed' || v.signature === 'invalid') return 'bad';
  if (v.completeness === 'ok' && v.signature === 'valid') return 'ok';
  return 'warn';
}

export const integrityText = (v: Integrity): string =>
  v === 'ok' ? 'ok — nothing altered' : 'failed — events were altered or are out of order';

export function completenessText(v: Completeness, signature: Signature): string {
  if (v === 'ok') return 'ok — signed counts and heads match';
  if (v === 'failed') return 'failed — events are missing';
  return signature === 'absent'
    ? 'unknown — unsigned bundles cannot prove nothing was cut off'
    : 'unknown — without a trusted signature nothing proves nothing was cut off';
}

export function signatureText(v: Signature): string {
  switch (v) {
    case 'valid':
      return 'valid — the manifest is signed; counts and heads are sealed';
    case 'invalid':
      return 'invalid — the manifest does not match its signature';
    case 'absent':
      return 'absent — the bundle is not signed';
    case 'wrong_key':
      return 'wrong key — signed by a key other than the expected one';
  }
}

export const formatBytes = (n: number): string =>
  n < 1024
    ? `${n} B`
    : n < 1024 * 1024
      ? `${(n / 1024).toFixed(1)} KB`
      : `${(n / 1024 / 1024).toFixed(1)} MB`;
