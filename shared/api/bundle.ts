import * as z from '../zod';
import { method } from './spec';

const RunIds = z
  .array(z.string().check(z.minLength(1), z.maxLength(200)))
  .check(z.minLength(1), z.maxLength(1000));
const Profile = z.enum(['credentials', 'share']);
const Counts = z.record(z.string(), z.int().check(z.nonnegative()));

export const BundleFindingSchema = z.object({
  run_id: z.nullable(z.string()),
  seq: z.nullable(z.int()),
  aspect: z.enum(['integrity', 'completeness', 'signature', 'note']),
  code: z.string(),
  message: z.string(),
});

/** What ProofLoop recorded of an unchained source it imported: the file, and each range read with its sha256. */
export const SealSchema = z.strictObject({
  file: z.string().check(z.maxLength(4096)),
  ranges: z
    .array(
      z.strictObject({
        from: z.int().check(z.nonnegative()),
        to: z.int().check(z.nonnegative()),
        sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
      }),
    )
    .check(z.maxLength(64)),
});

export const BundleVerdictSchema = z.object({
  ok: z.boolean(),
  file: z.string(),
  integrity: z.enum(['ok', 'failed']),
  completeness: z.enum(['ok', 'failed', 'unknown']),
  signature: z.enum(['valid', 'invalid', 'absent', 'wrong_key']),
  signer: z.nullable(z.object({ fingerprint: z.string(), pinned: z.boolean() })),
  first_failure: z.nullable(
    z.object({ run_id: z.nullable(z.string()), seq: z.nullable(z.int()), reason: z.string() }),
  ),
  runs: z.array(
    z.object({
      run_id: z.string(),
      events: z.int(),
      last_seq: z.int(),
      head_hash: z.string(),
      integrity: z.enum(['ok', 'failed']),
      completeness: z.enum(['ok', 'failed', 'unknown']),
      /**
       * Where the run's chain comes from: `source`, its writer chained it (integrity since it was
       * written); `import`, ProofLoop chained it when it imported an unchained source (integrity
       * since import), with the seal naming the source file's bytes and their sha256.
       */
      chain: z.optional(z.enum(['source', 'import'])),
      seal: z.optional(z.nullable(SealSchema)),
    }),
  ),
  findings: z.array(BundleFindingSchema),
  manifest: z.nullable(
    z.object({
      created_at: z.string(),
      app_version: z.string(),
      profile: Profile,
      runs: z.int(),
      events: z.int(),
    }),
  ),
});

export const BundlePreviewSchema = z.object({
  profile: Profile,
  rules: Counts,
  events_redacted: z.int(),
  runs: z.array(
    z.object({
      run_id: z.string(),
      events: z.int(),
      redacted_events: z.int(),
      rules: Counts,
      seqs: z.array(z.int()),
      seqs_truncated: z.boolean(),
    }),
  ),
});

export const bundleMethods = {
  'bundle.preview': method(
    z.object({ run_ids: RunIds, profile: z._default(Profile, 'share') }),
    BundlePreviewSchema,
    'What an export would redact: counts per rule and the seqs concerned, per run (never the values).',
  ),
  'bundle.export': method(
    z.object({
      run_ids: RunIds,
      out: z.string().check(z.minLength(1), z.maxLength(4096)),
      profile: z._default(Profile, 'share'),
      sign: z._default(z.boolean(), false),
      force: z._default(z.boolean(), false),
    }),
    z.object({
      file: z.string(),
      bytes: z.int(),
      sha256: z.string(),
      manifest: z.object({
        created_at: z.string(),
        profile: Profile,
        signed: z.boolean(),
        signer: z.nullable(z.string()),
        events_redacted: z.int(),
        rules: Counts,
        runs: z.array(
          z.object({
            run_id: z.string(),
            events: z.int(),
            head_hash: z.string(),
            redacted_events: z.int(),
          }),
        ),
      }),
    }),
    'Write a redacted audit bundle (zip) inside the open folder; optionally signed with the user key.',
  ),
  'bundle.verify': method(
    z.object({
      file: z.string().check(z.minLength(1), z.maxLength(4096)),
      key: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
    }),
    BundleVerdictSchema,
    'Verify a bundle: integrity, completeness and signature, with the first failing run and seq.',
  ),
  'bundle.info': method(
    z.object({ run_id: z.string().check(z.minLength(1), z.maxLength(200)) }),
    z.nullable(
      z.object({
        file: z.string(),
        sha256: z.string(),
        run_id: z.string(),
        renamed_from: z.nullable(z.string()),
        created_at: z.string(),
        profile: z.string(),
        verdict: z.pick(BundleVerdictSchema, {
          ok: true,
          integrity: true,
          completeness: true,
          signature: true,
          signer: true,
          first_failure: true,
          findings: true,
        }),
      }),
    ),
    'For a run opened from a bundle: where it came from and its verification verdict (for the banner); else null.',
  ),
  'bundle.open': method(
    z.object({ file: z.string().check(z.minLength(1), z.maxLength(4096)) }),
    z.object({ run_ids: z.array(z.string()), verdict: BundleVerdictSchema }),
    'Open a bundle read-only: its runs join the folder as bundle runs, with the verdict for a banner.',
  ),
} as const;
