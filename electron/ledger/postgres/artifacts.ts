import { ProofloopError } from '../../../shared/result';
import { sha256Bytes } from '../../crypto';
import { checkArtifact, type ArtifactItem } from '../engine';
import type { PostgresEngine } from './engine';

/**
 * A run's artifacts on the server (migration 6): content-addressed in `artifacts`, stored once
 * whichever runs share one, and named per run in `run_artifacts`, through which alone they are read.
 */

export async function artifactDigestsPg(db: PostgresEngine, runId: string): Promise<string[]> {
  const r = await db.q<{ digest: string }>(
    'SELECT digest FROM run_artifacts WHERE run_id = $1 ORDER BY digest',
    [runId],
  );
  return r.rows.map((x) => x.digest);
}

export async function artifactPg(db: PostgresEngine, runId: string, digest: string): Promise<string | null> {
  const r = await db.q<{ content: Buffer }>(
    `SELECT a.content FROM run_artifacts ra JOIN artifacts a ON a.digest = ra.digest
      WHERE ra.run_id = $1 AND ra.digest = $2`,
    [runId, digest],
  );
  const content = r.rows[0]?.content;
  // Checked as a file's would be: what the server returns must still be what was stored.
  return content && sha256Bytes(content) === digest ? content.toString('utf8') : null;
}

/** Stores what the run lacks, each checked against its digest; returns how many it lacked. */
export async function putArtifactsPg(
  db: PostgresEngine,
  runId: string,
  items: readonly ArtifactItem[],
): Promise<number> {
  const bytes = items.map((a) => checkArtifact(runId, a));
  if (!(await db.run(runId))) throw new ProofloopError('not_found', `no run ${runId} in ${db.location}`);
  if (items.length === 0) return 0;
  const digests = items.map((a) => a.digest);
  return db.transaction(async (client) => {
    await client.query(
      `INSERT INTO artifacts (digest, content) SELECT * FROM unnest($1::text[], $2::bytea[])
       ON CONFLICT (digest) DO NOTHING`,
      [digests, bytes],
    );
    const added = await client.query(
      `INSERT INTO run_artifacts (run_id, digest) SELECT $1, unnest($2::text[])
       ON CONFLICT (run_id, digest) DO NOTHING RETURNING digest`,
      [runId, digests],
    );
    return added.rowCount ?? 0;
  });
}
