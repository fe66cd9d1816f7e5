import { mkdirSync } from 'node:fs';
import type { ProofloopService } from '../service/service';

/** Runs made in a new default folder, so a new user sees real runs at once. */
export const FIRST_RUNS = [
  { task_id: 'fix-discount', variant: 'careful', seed: 1 },
  { task_id: 'fix-discount', variant: 'hasty', seed: 1 },
  { task_id: 'fix-discount', variant: 'rogue', seed: 1 },
] as const;

/**
 * Opens `folder` (creating it) and, when it holds no runs yet, starts the first runs in the
 * background. Used by the desktop app on first start and by `npm start` in web mode.
 */
export async function openDefaultFolder(service: ProofloopService, folder: string): Promise<void> {
  mkdirSync(folder, { recursive: true });
  await service.openFolder(folder);
  const runs = await service.invoke('runs.list', {});
  if (runs.length > 0) return;
  for (const r of FIRST_RUNS) {
    // Sequential: each start returns once its run exists; the runs go on in the background.
    const res = await service.call('run.start', r);
    if (!res.ok)
      process.stderr.write(`proofloop: first run ${r.task_id}/${r.variant}: ${res.error.message}\n`);
  }
}
