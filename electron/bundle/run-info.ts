import type { ResultOf } from '../../shared/api/contract';
import { ProofloopError } from '../../shared/result';
import type { Ledger } from '../ledger';

/**
 * What a run opened from a bundle keeps in its meta. Apart from open.ts (zip reading, verify) so
 * that showing a run asks for it without loading the bundle code.
 */
export interface BundleRunMeta {
  bundle: NonNullable<ResultOf<'bundle.info'>>;
}

/** The bundle a run was opened from and its verdict, or null for a run that is not from a bundle. */
export function bundleRunInfo(ledger: Ledger, runId: string): BundleRunMeta['bundle'] | null {
  const run = ledger.run(runId);
  if (!run) throw new ProofloopError('not_found', `no run "${runId}" in ${ledger.folder}`);
  if (run.source !== 'bundle') return null;
  return (run.meta as Partial<BundleRunMeta>).bundle ?? null;
}
