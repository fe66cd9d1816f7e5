import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { confine } from '../fs/confine';
import { HASH_RE } from '../../shared/protocol/chain';
import { ID_RANGE, idRange } from './event-ids';
import type { Ledger } from './ledger';
import type { ArtifactItem, LedgerEngine } from './engine';
import { readArtifact } from './artifact-store';

/** Artifacts sent in one call: bounded by count and by text, whatever their sizes. */
const ARTIFACT_BATCH = 64;
const ARTIFACT_BATCH_CHARS = 32 << 20;

/**
 * Where an import's artifacts live: beside the ledger, in `artifacts/` of its directory, so
 * `<folder>/.proofloop/artifacts/<sha256>` for a runs folder and
 * `$PROOFLOOP_HOME/folders/<key>/artifacts/<sha256>` for another program's folder, which is never
 * written into. Shared by every run of the folder: a value is stored once whoever repeats it.
 * (The runner's own runs keep theirs in `<folder>/<run_id>/artifacts/`.) The argument is the
 * directory the artifact helpers of artifact-store.ts take as a run's folder.
 */
export function importArtifactsHome(ledgerFile: string): string {
  return path.dirname(ledgerFile);
}

/**
 * The directory whose `artifacts/` holds a run's artifacts: an imported run's values moved out of
 * its events are beside the ledger (ingest/outline.ts), a run ProofLoop executed has its own
 * folder. Confined: a run folder, its artifacts folder or the file may be a link (refused, not
 * followed, by readArtifact).
 */
export function artifactsHomeOf(ledger: Ledger, run: { run_id: string; source: string }): string {
  if (run.source === 'imported') return importArtifactsHome(ledger.db.name);
  return confine(ledger.runsRoot, run.run_id, 'run folder');
}

/**
 * The digests of the artifacts a runs folder holds for a run. An imported run shares its home with
 * every other import, so its own are the ones its events name (`source.artifacts`) that are there;
 * a run the runner executed (or one pulled or opened from a bundle) has its own folder, and all in
 * it are its.
 */
export function runArtifactDigests(ledger: Ledger, run: { run_id: string; source: string }): string[] {
  const out = new Set<string>();
  if (run.source === 'imported') {
    const runNo = ledger.runNo(run.run_id);
    if (runNo === undefined) return [];
    const rows = ledger.db
      .prepare(`SELECT source FROM events WHERE ${ID_RANGE} AND source LIKE '%"artifacts"%'`)
      .pluck()
      .all(...idRange(runNo, 1, Number.MAX_SAFE_INTEGER)) as string[];
    const home = artifactsHomeOf(ledger, run);
    // Named by an event and here: a run pulled from elsewhere names its artifacts before they come.
    for (const text of rows) {
      const moved = (JSON.parse(text) as { artifacts?: { digest?: unknown }[] }).artifacts ?? [];
      for (const m of moved)
        if (
          typeof m.digest === 'string' &&
          HASH_RE.test(m.digest) &&
          !out.has(m.digest) &&
          holdsArtifact(home, m.digest)
        )
          out.add(m.digest);
    }
  } else for (const d of folderArtifactDigests(artifactsHomeOf(ledger, run))) out.add(d);
  return [...out].sort();
}

/**
 * Whether `<runDir>/artifacts/<digest>` is there (not read: storeArtifact, too, writes only a file
 * that is missing).
 */
export function holdsArtifact(runDir: string, digest: string): boolean {
  try {
    return (
      lstatSync(confine(runDir, ['artifacts', digest], 'artifact'), { throwIfNoEntry: false })?.isFile() ??
      false
    );
  } catch (e) {
    // No run folder yet (a run pulled here before its artifacts): none held.
    if ((e as { code?: string }).code === 'ENOENT') return false;
    throw e;
  }
}

/** The digests of the artifacts in `<runDir>/artifacts/` (none when it is missing). */
export function folderArtifactDigests(runDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(confine(runDir, 'artifacts', 'artifacts folder'));
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return [];
    throw e;
  }
  // Temporary files of a write under way end in .tmp: not artifacts (yet).
  return names.filter((n) => HASH_RE.test(n)).sort();
}

/** A run's local folder as a source of its artifacts (push.ts, copyArtifacts). */
export function folderArtifactSource(runDir: string): ArtifactSource {
  return {
    artifactDigests: () => Promise.resolve(folderArtifactDigests(runDir)),
    artifact: (_runId, digest) => Promise.resolve(readArtifact(runDir, digest)),
  };
}

/** Where artifacts are copied from: an engine, or a run's local folder (folderArtifactSource). */
export type ArtifactSource = Pick<LedgerEngine, 'artifactDigests' | 'artifact'>;

/** Copies the artifacts of a run that `to` lacks, in bounded batches; counts what it could not read here. */
export async function copyArtifacts(
  from: ArtifactSource,
  to: LedgerEngine,
  runId: string,
): Promise<{ artifacts: number; artifacts_missing: number }> {
  const have = new Set(await to.artifactDigests(runId));
  let artifacts = 0;
  let missing = 0;
  let batch: ArtifactItem[] = [];
  let chars = 0;
  const flush = async () => {
    if (batch.length > 0) artifacts += await to.putArtifacts(runId, batch);
    batch = [];
    chars = 0;
  };
  for (const digest of await from.artifactDigests(runId)) {
    if (have.has(digest)) continue;
    const text = await from.artifact(runId, digest);
    if (text === null) {
      missing += 1;
      continue;
    }
    batch.push({ digest, text });
    chars += text.length;
    if (batch.length >= ARTIFACT_BATCH || chars >= ARTIFACT_BATCH_CHARS) await flush();
  }
  await flush();
  return { artifacts, artifacts_missing: missing };
}
