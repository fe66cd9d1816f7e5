import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';
import { createRedactor } from '../../shared/redact';
import { toAtif } from '../../shared/formats/atif-out';
import type { SourceRef } from '../../shared/formats';
import type { LedgerReader } from '../ledger';
import { sha256Hex as fastSha256 } from '../crypto';
import { folderRedactRules } from './export';
import type { RedactionProfile } from './format';

export interface AtifExportResult {
  run_id: string;
  out: string;
  steps: number;
  events: number;
  redacted_values: number;
}

/**
 * `proofloop export <run> --format atif`: the run as an ATIF trajectory.json (shared/formats/
 * atif-out.ts), redacted with the bundle's profile (the same secret, the same placeholder), written
 * whole beside its place and renamed into it, so a reader never sees half a file.
 */
export function exportAtif(
  ledger: LedgerReader,
  runId: string,
  out: string,
  opts: { profile?: RedactionProfile; force?: boolean } = {},
): AtifExportResult {
  const run = ledger.run(runId);
  if (!run) throw new ProofloopError('not_found', `no run ${runId} in ${ledger.folder}`);
  const abs = path.resolve(out);
  if (existsSync(abs) && !opts.force)
    throw new ProofloopError('conflict', `${abs} exists: pass --force to replace it`);
  let events = 0;
  const trajectory = toAtif(
    { run_id: run.run_id, format: run.format },
    (function* () {
      for (const e of ledger.iterate(runId)) {
        events += 1;
        yield { ...e, source: (e.source as SourceRef | undefined) ?? null };
      }
    })(),
  );
  const redactor = createRedactor(opts.profile ?? 'share', {
    sha256: fastSha256,
    rules: folderRedactRules(ledger.folder),
  });
  const r = redactor.redactValue(trajectory);
  keepStrings(trajectory, r.value);
  const tmp = `${abs}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(r.value, null, 2)}\n`, { flag: 'wx' });
    renameSync(tmp, abs);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new ProofloopError('io', `cannot write ${abs}: ${(e as Error).message}`);
  }
  return {
    run_id: runId,
    out: abs,
    steps: (trajectory.steps as unknown[]).length,
    events,
    redacted_values: r.hits,
  };
}

type Node = Record<string, unknown> | unknown[];
const isNode = (x: unknown): x is Node => typeof x === 'object' && x !== null;

/**
 * Where the profile replaced a whole text by a note (`{redacted: "full_text", sha256, length}`, as
 * bundles keep it), ATIF needs a string: the note is written as one. Walks both values together,
 * with a stack (their depth is the payloads', bounded at import).
 */
function keepStrings(before: unknown, after: unknown): void {
  const stack: [unknown, unknown][] = [[before, after]];
  while (stack.length > 0) {
    const [a, b] = stack.pop()!;
    if (!isNode(a) || !isNode(b)) continue;
    for (const k of Object.keys(b)) {
      const x = (a as Record<string, unknown>)[k];
      const y = (b as Record<string, unknown>)[k];
      if (typeof x === 'string' && isNode(y) && !Array.isArray(y)) {
        const note = y as { redacted?: unknown; sha256?: unknown; length?: unknown };
        (b as Record<string, unknown>)[k] =
          `[redacted ${String(note.redacted ?? '')}: ${String(note.length ?? '?')} characters, sha256 ${String(note.sha256 ?? '')}]`;
      } else stack.push([x, y]);
    }
  }
}
