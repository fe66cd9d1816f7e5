import { bundleRunInfo, exportBundle, openBundle, previewBundle, verifyBundle } from '../bundle';
import { confineRequested } from '../fs/confine';
import { withLocalCopy } from '../bundle/team-copy';
import type { Ledger } from '../ledger';
import type { ServiceContext } from './context';
import { ProofloopError } from '../../shared/result';
import type { Handler as H } from './handler';

/** Paths from the renderer are untrusted: bundles and keys are read and written inside the open folder only. */
export function bundleHandlers(ctx: ServiceContext) {
  /** The runs' ledger: the open folder's, or for a team ledger a local copy of these runs (team-copy.ts). */
  const over = <T>(runIds: readonly string[], fn: (ledger: Ledger) => Promise<T> | T): Promise<T> => {
    const l = ctx.sqlite();
    return l ? Promise.resolve(fn(l)) : withLocalCopy(ctx.engine(), runIds, ctx.folder(), fn);
  };
  const preview: H<'bundle.preview'> = ({ run_ids, profile }) =>
    over(run_ids, (l) => previewBundle(l, run_ids, profile));
  const exp: H<'bundle.export'> = async ({ run_ids, out, profile, sign, force }) => {
    const file = confineRequested(ctx.folder(), out, 'out');
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
  const verify: H<'bundle.verify'> = ({ file, key }) =>
    verifyBundle(confineRequested(ctx.folder(), file, 'file'), {
      key: key ? confineRequested(ctx.folder(), key, 'key') : undefined,
    });
  const open: H<'bundle.open'> = async ({ file }) => {
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
