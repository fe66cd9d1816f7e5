import { bundleRunInfo } from '../bundle/run-info';
import { confineRequested } from '../fs/confine';
import type { Ledger } from '../ledger';
import type { ServiceContext } from './context';
import { ProofloopError } from '../../shared/result';
import type { Handler as H } from './handler';

/**
 * The bundle code (zip reading and writing, signing, redaction profiles) is loaded on the first
 * preview, export, verify or open: a `serve` that only shows runs never compiles it.
 */
const bundles = () => import('../bundle');

/** Paths from the renderer are untrusted: bundles and keys are read and written inside the open folder only. */
export function bundleHandlers(ctx: ServiceContext) {
  /** The runs' ledger: the open folder's, or for a team ledger a local copy of these runs (team-copy.ts). */
  const over = async <T>(runIds: readonly string[], fn: (ledger: Ledger) => Promise<T> | T): Promise<T> => {
    const l = ctx.sqlite();
    if (l) return fn(l);
    const { withLocalCopy } = await import('../bundle/team-copy');
    return withLocalCopy(ctx.engine(), runIds, ctx.folder(), fn);
  };
  const preview: H<'bundle.preview'> = async ({ run_ids, profile }) => {
    const { previewBundle } = await bundles();
    return over(run_ids, (l) => previewBundle(l, run_ids, profile));
  };
  const exp: H<'bundle.export'> = async ({ run_ids, out, profile, sign, force }) => {
    const file = confineRequested(ctx.folder(), out, 'out');
    const { exportBundle } = await bundles();
    const r = await over(run_ids, (l) =>
      exportBundle(l, { runIds: run_ids, out: file, profile, sign, force }),
    );
    const m = r.manifest;
    return {
      file: r.file,
      bytes: r.bytes,
      sha256: r.sha256,
      manifest: {
        created_at: m.created_at,
        profile: m.profile,
        signed: m.signer !== null,
        signer: m.signer?.fingerprint ?? null,
        events_redacted: m.redaction.events_redacted,
        rules: m.redaction.rules,
        runs: m.runs.map((x) => ({
          run_id: x.run_id,
          events: x.events,
          head_hash: x.head_hash,
          redacted_events: x.redacted_events,
        })),
      },
    };
  };
  const verify: H<'bundle.verify'> = async ({ file, key }) => {
    const path = confineRequested(ctx.folder(), file, 'file');
    const keyPath = key ? confineRequested(ctx.folder(), key, 'key') : undefined;
    const { verifyBundle } = await bundles();
    return verifyBundle(path, { key: keyPath });
  };
  const open: H<'bundle.open'> = async ({ file }) => {
    const { openBundle } = await bundles();
    const r = await openBundle(ctx.ledger(), confineRequested(ctx.folder(), file, 'file'));
    ctx.emit('runs.changed', { run_ids: r.run_ids });
    return { run_ids: r.run_ids, verdict: r.verdict };
  };
  const info: H<'bundle.info'> = async ({ run_id }) => {
    const l = ctx.sqlite();
    if (l) return bundleRunInfo(l, run_id);
    // A run opened from a bundle is a runs folder's (bundle.open writes a folder's ledger); on a team ledger none is.
    if (!(await ctx.engine().run(run_id))) {
      throw new ProofloopError('not_found', `no run "${run_id}" in ${ctx.engine().location}`);
    }
    return null;
  };
  return {
    'bundle.info': info,
    'bundle.preview': preview,
    'bundle.export': exp,
    'bundle.verify': verify,
    'bundle.open': open,
  };
}
