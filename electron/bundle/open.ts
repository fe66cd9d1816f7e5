import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BundleRunMeta } from './run-info';
import type { LedgerEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import { sha256Bytes } from '../crypto';
import type { ImportedEvent, Ledger } from '../ledger';
import { lineRunIdOf, type BundleManifest, type BundleVerdict, type ManifestRun } from './format';
import { needsBytes, verifyExtracted, type VerifyOptions } from './verify';
import { DEFAULT_LIMITS, withExtractedBundle } from './zip-read';

export interface OpenedBundle {
  file: string;
  /** The ids the bundle's runs have in this ledger (suffixed when the id was taken). */
  run_ids: string[];
  verdict: BundleVerdict;
}

/**
 * What the UI needs for its banner, kept in `runs.meta` of each run opened from a bundle: the shape
 * the API's bundle.info answers with (shared/api/bundle.ts).
 */
function lastHash(c: Collected): string | undefined {
  return c.events.at(-1)?.e.hash;
}

interface Collected {
  run: ManifestRun;
  events: { e: LedgerEvent; digest: string }[];
}

/**
 * Opens a bundle in a ledger, read-only: verifies it, then imports its runs as `source: 'bundle'`
 * runs (redacted events stored with `redacted = 1` and their carried digest) and keeps the verdict
 * in each run's meta for the banner. A bundle that fails verification still opens, so its problems
 * can be seen; one that is not a valid bundle at all is refused with a clear error.
 * Important: a run whose id is taken gets `<id>:bundle-<hash>`; its unredacted events' digests
 * cover the original id (meta.bundle.renamed_from), so a chain check must use that id.
 */
export async function openBundle(
  ledger: Ledger,
  file: string,
  opts: VerifyOptions = {},
): Promise<OpenedBundle> {
  const abs = path.resolve(file);
  const collected: Collected[] = [];
  const { verdict, manifest } = await withExtractedBundle(
    abs,
    opts.limits ?? DEFAULT_LIMITS,
    async (b) => {
      let manifest: BundleManifest | null = null;
      const verdict = await verifyExtracted(abs, b, opts, {
        onRun: (run, m) => {
          manifest = m;
          const c: Collected = { run, events: [] };
          collected.push(c);
          return (e, digest) => c.events.push({ e, digest });
        },
      });
      return { verdict, manifest: manifest as BundleManifest | null };
    },
    needsBytes,
  );
  const bundleSha = sha256Bytes(readFileSync(abs));
  const short = bundleSha.slice(0, 10);
  const runIds: string[] = [];
  const tx = ledger.db.transaction(() => {
    for (const c of collected) {
      const { run } = c;
      let id = run.run_id;
      const existing = ledger.run(id);
      if (existing) {
        // The same bundle opened again: its runs are already here.
        if (existing.source === 'bundle' && existing.origin === abs && existing.head_hash === lastHash(c)) {
          runIds.push(id);
          continue;
        }
        id = `${run.run_id}:bundle-${short}`;
        const again = ledger.run(id);
        if (again) {
          if (again.source !== 'bundle') throw new ProofloopError('conflict', `run ${id} already exists`);
          runIds.push(id);
          continue;
        }
      }
      const meta: BundleRunMeta = {
        bundle: {
          file: abs,
          sha256: bundleSha,
          run_id: run.run_id,
          // The id its lines carry and their digests cover (the source's, for a run its ledger had
          // stored under another id), whenever the run is stored here under a different one.
          renamed_from: id === lineRunIdOf(run) ? null : lineRunIdOf(run),
          created_at: manifest?.created_at ?? '',
          profile: manifest?.profile ?? '',
          verdict: {
            ok: verdict.ok,
            integrity: verdict.integrity,
            completeness: verdict.completeness,
            signature: verdict.signature,
            signer: verdict.signer,
            first_failure: verdict.first_failure,
            findings: verdict.findings.slice(0, 50),
          },
        },
      };
      ledger.createRun(id, {
        source: 'bundle',
        chained: true,
        origin: abs,
        // The links over source lines that are no event, so verify of this run links over them too.
        meta: {
          ...meta,
          ...(run.stated_links ? { stated_links: run.stated_links } : {}),
        } as unknown as Record<string, unknown>,
      });
      // Only a strictly increasing run of seqs can be stored; what a broken bundle holds beyond
      // that is in the verdict's findings.
      const events: ImportedEvent[] = [];
      let lastSeq = 0;
      for (const { e } of c.events) {
        if (e.seq <= lastSeq) continue;
        lastSeq = e.seq;
        events.push({
          seq: e.seq,
          kind: e.kind,
          v: e.v,
          at: e.at,
          payloadJson: JSON.stringify(e.payload),
          hash: e.hash,
          digest: e.digest ?? null,
        });
      }
      ledger.insertImported(id, events);
      runIds.push(id);
    }
  });
  tx.immediate();
  return { file: abs, run_ids: runIds, verdict };
}
