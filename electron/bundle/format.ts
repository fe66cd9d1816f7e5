import * as z from '../../shared/zod';
import { SealSchema } from '../../shared/api/bundle';
import type { BundleVerdictSchema } from '../../shared/api/bundle';
import { HASH_RE } from '../../shared/protocol';

/** The zip layout and manifest of an audit bundle (DESIGN.md, "Audit bundles"). */
export const BUNDLE_FORMAT = 'proofloop-bundle';
export const BUNDLE_FORMAT_VERSION = 1;

export const MANIFEST = 'manifest.json';
export const SIGNATURE = 'manifest.sig';
export const VERIFY_MD = 'VERIFY.md';
export const REPORT = 'report.html';
export const RUN_FILES = ['events.jsonl', 'state.json', 'redactions.txt'] as const;
export type RunFileName = (typeof RUN_FILES)[number];

export type RedactionProfile = 'credentials' | 'share';

/** The run id a manifest run's lines carry and their digests cover. */
export const lineRunIdOf = (r: { run_id: string; source_run_id?: string }): string =>
  r.source_run_id ?? r.run_id;

/** A run's folder inside the bundle: its position and a file-name-safe form of its id. */
export function runDir(index: number, runId: string): string {
  return `runs/${String(index + 1).padStart(3, '0')}-${runId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** Entry names a bundle may hold at all (before the manifest says which exactly). */
export const TOP_LEVEL_ENTRIES: ReadonlySet<string> = new Set([MANIFEST, SIGNATURE, VERIFY_MD, REPORT]);
export const RUN_ENTRY_RE =
  /^runs\/(\d{3,6}-[A-Za-z0-9._-]{1,200})\/(events\.jsonl|state\.json|redactions\.txt)$/;
export const DIR_ENTRY_RE = /^runs\/(?:\d{3,6}-[A-Za-z0-9._-]{1,200}\/)?$/;

const hex64 = z.string().check(z.regex(HASH_RE, 'must be 64 lowercase hex digits'));
const count = z.int().check(z.nonnegative());
const ruleCounts = z.record(z.string().check(z.regex(/^[A-Za-z0-9_.:-]{1,100}$/)), count);

export const ManifestRunSchema = z.strictObject({
  run_id: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/)),
  /**
   * The run's id as its source wrote it, when the run was stored under another id (an import
   * whose id could not be used as is): its lines carry this id, the one their digests cover.
   */
  source_run_id: z.optional(z.string().check(z.minLength(1))),
  dir: z.string().check(z.regex(/^runs\/\d{3,6}-[A-Za-z0-9._-]{1,200}$/)),
  source: z.string().check(z.maxLength(32)),
  status: z.string().check(z.maxLength(64)),
  task_id: z.nullable(z.string().check(z.maxLength(500))),
  variant: z.nullable(z.string().check(z.maxLength(200))),
  events: count,
  first_seq: count,
  last_seq: count,
  /** Hash of the first event: a run swapped in from elsewhere fails at seq 1, not only at its head. */
  first_hash: z.nullable(hex64),
  head_hash: hex64,
  redacted_events: count,
  rules: ruleCounts,
  /** Absent (older bundles) reads as `source`. See the verdict's `chain` in shared/api/bundle.ts. */
  chain: z.optional(z.enum(['source', 'import'])),
  seal: z.optional(SealSchema),
  /**
   * Lines of the run's source that are no event (nested too deep to be read), by the chain fields
   * they state: the bundle holds no line for them, and the chain links over each by its prev and
   * hash (the ledger's runs.meta.stated_links, electron/ledger/verify.ts).
   */
  stated_links: z.optional(
    z
      .array(z.strictObject({ seq: z.int().check(z.minimum(1)), prev: hex64, hash: hex64 }))
      .check(z.maxLength(100_000)),
  ),
});

export const ManifestSchema = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  format_version: z.literal(BUNDLE_FORMAT_VERSION),
  app: z.strictObject({ name: z.literal('proofloop'), version: z.string().check(z.maxLength(64)) }),
  created_at: z.string().check(z.maxLength(64)),
  profile: z.enum(['credentials', 'share']),
  /** Per-rule counts over the whole bundle: how many values each rule replaced, never the values. */
  redaction: z.strictObject({ events_redacted: count, rules: ruleCounts }),
  runs: z.array(ManifestRunSchema).check(z.maxLength(10_000)),
  /** Every entry but manifest.json and manifest.sig, with its sha256 and size. */
  files: z.record(z.string().check(z.maxLength(300)), z.strictObject({ sha256: hex64, bytes: count })),
  /** Who signs: sealed inside the manifest so the signer cannot be swapped without breaking the signature. */
  signer: z.nullable(
    z.strictObject({
      alg: z.literal('ed25519'),
      fingerprint: z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/)),
    }),
  ),
});

export type BundleManifest = z.infer<typeof ManifestSchema>;
export type ManifestRun = z.infer<typeof ManifestRunSchema>;

/** The content of manifest.sig: an Ed25519 signature over the exact bytes of manifest.json. */
export const SignatureFileSchema = z.strictObject({
  alg: z.literal('ed25519'),
  fingerprint: z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/)),
  public_key: z.string().check(z.maxLength(1000)),
  signature: z.string().check(z.regex(/^[A-Za-z0-9+/]{86}==$/, 'must be a base64 Ed25519 signature')),
});
export type SignatureFile = z.infer<typeof SignatureFileSchema>;

/**
 * A bundle's verdict, as the API sends it (shared/api/bundle.ts has the schema). `signer`: the
 * fingerprint of the key that signed, and whether it was pinned (--key, or the user's own key).
 * A finding's aspect: integrity, something was altered; completeness, something is missing;
 * signature; note, information.
 */
export type BundleVerdict = z.infer<typeof BundleVerdictSchema>;
export type BundleFinding = BundleVerdict['findings'][number];
export type RunVerdict = BundleVerdict['runs'][number];
export type Integrity = BundleVerdict['integrity'];
export type Completeness = BundleVerdict['completeness'];
export type SignatureVerdict = BundleVerdict['signature'];
