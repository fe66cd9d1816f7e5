import { z } from 'zod';
import { method } from './spec';

const RunIds = z.array(z.string().min(1).max(200)).min(1).max(1000);
const Profile = z.enum(['credentials', 'share']);
const Counts = z.record(z.string(), z.number().int().nonnegative());

export const BundleFindingSchema = z.object({
  run_id: z.string().nullable(),
  seq: z.number().int().nullable(),
  aspect: z.enum(['integrity', 'completeness', 'signature', 'note']),
  code: z.string(),
  message: z.string(),
});

/** What ProofLoop recorded of an unchained source it imported: the file, and each range read with its sha256. */
export const SealSchema = z
  .object({
    file: z.string().max(4096),
    ranges: z
      .array(
        z
          .object({
            from: z.number().int().nonnegative(),
            to: z.number().int().nonnegative(),
            sha256: z.string().regex(/^[0-9a-f]{64}$/),
          })
          .strict(),
      )
      .max(64),
  })
  .strict();

export const BundleVerdictSchema = z.object({
  ok: z.boolean(),
  file: z.string(),
  integrity: z.enum(['ok', 'failed']),
  completeness: z.enum(['ok', 'failed', 'unknown']),
  signature: z.enum(['valid', 'invalid', 'absent', 'wrong_key']),
  signer: z.object({ fingerprint: z.string(), pinned: z.boolean() }).nullable(),
  first_failure: z
    .object({ run_id: z.string().nullable(), seq: z.number().int().nullable(), reason: z.string() })
    .nullable(),
  runs: z.array(
    z.object({
      run_id: z.string(),
      events: z.number().int(),
      last_seq: z.number().int(),
      head_hash: z.string(),
      integrity: z.enum(['ok', 'failed']),
      completeness: z.enum(['ok', 'failed', 'unknown']),
      /**
       * Where the run's chain comes from: `source`, its writer chained it (integrity since it was
       * written); `import`, ProofLoop chained it when it imported an unchained source (integrity
       * since import), with the seal naming the source file's bytes and their sha256.
       */
      chain: z.enum(['source', 'import']).optional(),
      seal: SealSchema.nullable().optional(),
    }),
  ),
  findings: z.array(BundleFindingSchema),
  manifest: z
    .object({
      created_at: z.string(),
      app_version: z.string(),
      profile: Profile,
      runs: z.number().int(),
      events: z.number().int(),
    })
    .nullable(),
});

export const BundlePreviewSchema = z.object({
  profile: Profile,
  rules: Counts,
  events_redacted: z.number().int(),
  runs: z.array(
    z.object({
      run_id: z.string(),
      events: z.number().int(),
      redacted_events: z.number().int(),
      rules: Counts,
      seqs: z.array(z.number().int()),
      seqs_truncated: z.boolean(),
    }),
  ),
});

export const bundleMethods = {
  'bundle.preview': method(
    z.object({ run_ids: RunIds, profile: Profile.default('share') }),
    BundlePreviewSchema,
    'What an export would redact: counts per rule and the seqs concerned, per run (never the values).',
  ),
  'bundle.export': method(
    z.object({
      run_ids: RunIds,
      out: z.string().min(1).max(4096),
      profile: Profile.default('share'),
      sign: z.boolean().default(false),
      force: z.boolean().default(false),
    }),
    z.object({
      file: z.string(),
      bytes: z.number().int(),
      sha256: z.string(),
      manifest: z.object({
        created_at: z.string(),
        profile: Profile,
        signed: z.boolean(),
        signer: z.string().nullable(),
        events_redacted: z.number().int(),
        rules: Counts,
        runs: z.array(
          z.object({
            run_id: z.string(),
            events: z.number().int(),
            head_hash: z.string(),
            redacted_events: z.number().int(),
          }),
        ),
      }),
    }),
    'Write a redacted audit bundle (zip) inside the open folder; optionally signed with the user key.',
  ),
  'bundle.verify': method(
    z.object({ file: z.string().min(1).max(4096), key: z.string().min(1).max(4096).optional() }),
    BundleVerdictSchema,
    'Verify a bundle: integrity, completeness and signature, with the first failing run and seq.',
  ),
  'bundle.info': method(
    z.object({ run_id: z.string().min(1).max(200) }),
    z
      .object({
        file: z.string(),
        sha256: z.string(),
        run_id: z.string(),
        renamed_from: z.string().nullable(),
        created_at: z.string(),
        profile: z.string(),
        verdict: BundleVerdictSchema.pick({
          ok: true,
          integrity: true,
          completeness: true,
          signature: true,
          signer: true,
          first_failure: true,
          findings: true,
        }),
      })
      .nullable(),
    'For a run opened from a bundle: where it came from and its verification verdict (for the banner); else null.',
  ),
  'bundle.open': method(
    z.object({ file: z.string().min(1).max(4096) }),
    z.object({ run_ids: z.array(z.string()), verdict: BundleVerdictSchema }),
    'Open a bundle read-only: its runs join the folder as bundle runs, with the verdict for a banner.',
  ),
} as const;
