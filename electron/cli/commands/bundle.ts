import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { ProofloopError } from '../../../shared/result';
import type { RedactionProfile } from '../../bundle';
import type { BundleVerdict } from '../../bundle/format';
import type { CliContext } from '../context';
import type { Ledger } from '../../ledger';
import { EXIT } from '../context';
import { table } from '../format';

const formatArg = (v: string): 'bundle' | 'atif' => {
  if (v !== 'bundle' && v !== 'atif') throw new InvalidArgumentError('--format is bundle or atif');
  return v;
};

const profileArg = (v: string): RedactionProfile => {
  if (v !== 'share' && v !== 'credentials')
    throw new InvalidArgumentError('--profile is share or credentials');
  return v;
};

/** Where a run's chain comes from, as a reviewer needs to read it. */
function chainText(r: BundleVerdict['runs'][number]): string {
  return r.chain === 'import'
    ? 'sealed at import (integrity since import)'
    : 'source (integrity since written)';
}

function describeVerdict(v: BundleVerdict): string {
  const lines = [
    `${v.ok ? 'ok  ' : 'FAIL'} ${v.file}`,
    `integrity: ${v.integrity}   completeness: ${v.completeness}   signature: ${v.signature}` +
      (v.signer
        ? ` (${v.signer.fingerprint.slice(0, 23)}…${v.signer.pinned ? ', pinned' : ', not pinned'})`
        : ''),
  ];
  if (v.first_failure) {
    const where = [
      v.first_failure.run_id ? `run ${v.first_failure.run_id}` : 'bundle',
      v.first_failure.seq !== null ? `seq ${v.first_failure.seq}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    lines.push(`first failure: ${where}: ${v.first_failure.reason}`);
  }
  if (v.runs.length) {
    lines.push(
      table(
        v.runs.map((r) => [
          r.run_id,
          r.events,
          r.last_seq,
          r.head_hash.slice(0, 16) + '…',
          r.integrity,
          r.completeness,
          chainText(r),
        ]),
        ['RUN', 'EVENTS', 'LAST SEQ', 'HEAD', 'INTEGRITY', 'COMPLETENESS', 'CHAIN'],
      ),
    );
    for (const r of v.runs) {
      for (const s of r.seal?.ranges ?? [])
        lines.push(`  seal of ${r.run_id}: ${r.seal!.file} bytes ${s.from}–${s.to} sha256 ${s.sha256}`);
    }
  }
  for (const f of v.findings.slice(0, 50)) {
    lines.push(
      `  ${f.aspect}: ${f.code}${f.run_id ? ` run ${f.run_id}` : ''}${f.seq !== null ? ` seq ${f.seq}` : ''}: ${f.message}`,
    );
  }
  if (v.findings.length > 50) lines.push(`  … ${v.findings.length - 50} more findings`);
  return lines.join('\n');
}

/** The bundle code (zip, signing, redaction) is loaded by the commands that use it, not by every command. */
const bundles = () => import('../../bundle');

/** `proofloop open <bundle.zip>`: imports the bundle's runs read-only into the --folder ledger. */
export async function openBundleCommand(ctx: CliContext, file: string, key?: string): Promise<void> {
  // `open` creates what it opens into, a bundle's viewer folder as a runs folder.
  const ledger = (await ctx.service({ create: true })).ctx.ledger();
  const { openBundle } = await bundles();
  const r = await openBundle(ledger, path.resolve(file), { key });
  ctx.print(r, () =>
    [
      `opened ${r.file} read-only in ${ledger.folder}: runs ${r.run_ids.join(', ')}`,
      describeVerdict(r.verdict),
    ].join('\n'),
  );
  if (!r.verdict.ok) ctx.setExit(EXIT.findings);
}

export function registerBundleCommands(program: Command, ctx: CliContext): void {
  program
    .command('export <runs...>')
    .description(
      'write a redacted audit bundle (zip) of runs: events, final states, manifest, VERIFY.md, report.html',
    )
    .option(
      '--out <file>',
      'the file to write (e.g. audit.zip, or trajectory.json with --format atif); not with --preview',
    )
    .option(
      '--format <format>',
      'bundle (default: the audit bundle) or atif (one run as an ATIF trajectory.json, for Harbor and other benchmark harnesses)',
      formatArg,
      'bundle',
    )
    .option(
      '--profile <profile>',
      'redaction profile: share (default: credentials and personal data) or credentials',
      profileArg,
      'share',
    )
    .option(
      '--sign',
      'sign the manifest with your Ed25519 key (created on first use in $PROOFLOOP_HOME/keys)',
    )
    .option('--force', 'replace an existing file at --out')
    .option('--preview', 'only show what would be redacted (counts per rule, seqs), write nothing')
    .action(
      async (
        runs: string[],
        o: {
          out?: string;
          profile: RedactionProfile;
          sign?: boolean;
          force?: boolean;
          preview?: boolean;
          format: 'bundle' | 'atif';
        },
      ) => {
        // --preview writes nothing, so it needs no --out; everything else does.
        if (!o.preview && !o.out)
          throw new InvalidArgumentError("required option '--out <file>' not specified");
        const out = o.out ?? '';
        // On a team ledger (--ledger postgres://…) the runs are exported from a local copy (team-copy.ts).
        const svc = await ctx.service();
        const team = svc.ctx.sqlite() ? null : svc.ctx.engine();
        const { exportBundle, previewBundle } = await bundles();
        const act = async (ledger: Ledger): Promise<void> => {
          if (o.format === 'atif') {
            if (runs.length !== 1)
              throw new InvalidArgumentError('--format atif writes one run: name exactly one');
            if (o.sign || o.preview) throw new InvalidArgumentError('--sign and --preview are for bundles');
            const { exportAtif } = await import('../../bundle/atif');
            const r = exportAtif(ledger, runs[0]!, out, { profile: o.profile, force: o.force });
            ctx.print(
              r,
              () =>
                `wrote ${r.out}: run ${r.run_id} as ATIF (${r.events} events in ${r.steps} steps; profile ${o.profile}, ${r.redacted_values} values redacted)`,
            );
            return;
          }
          if (o.preview) {
            const p = previewBundle(ledger, runs, o.profile);
            ctx.print(p, () =>
              [
                Object.keys(p.rules).length === 0 && p.events_redacted > 0
                  ? // A run opened from a bundle: redacted before, nothing new replaced now.
                    `profile ${p.profile}: nothing more to redact; ${p.events_redacted} events were already redacted and go out as they are`
                  : `profile ${p.profile}: ${p.events_redacted} events would be redacted`,
                table(Object.entries(p.rules), ['RULE', 'REPLACEMENTS']),
                ...p.runs.map(
                  (r) =>
                    `${r.run_id}: ${r.redacted_events}/${r.events} events, seqs ${r.seqs.join(', ')}${r.seqs_truncated ? ', …' : ''}`,
                ),
              ].join('\n'),
            );
            return;
          }
          const r = await exportBundle(ledger, {
            runIds: runs,
            out,
            profile: o.profile,
            sign: o.sign,
            force: o.force,
          });
          const m = r.manifest;
          const { publicKeyFile } = await import('../../bundle/sign');
          ctx.print({ file: r.file, bytes: r.bytes, sha256: r.sha256, manifest: m }, () =>
            [
              `wrote ${r.file} (${r.bytes} bytes, sha256 ${r.sha256.slice(0, 16)}…)`,
              `profile ${m.profile}: ${m.redaction.events_redacted} events redacted` +
                (Object.keys(m.redaction.rules).length
                  ? ` (${Object.entries(m.redaction.rules)
                      .map(([k, n]) => `${k} ${n}`)
                      .join(', ')})`
                  : ''),
              m.signer
                ? // Where the public key is: the reviewer needs it to prove completeness.
                  `signed with ${m.signer.fingerprint} (public key ${publicKeyFile()}: give it to the reviewer for verify-bundle --key)`
                : 'not signed (--sign seals counts and head hashes)',
              ...m.runs.map((x) => `  ${x.run_id}: ${x.events} events, head ${x.head_hash.slice(0, 16)}…`),
            ].join('\n'),
          );
        };
        if (team) {
          const { withLocalCopy } = await import('../../bundle/team-copy');
          await withLocalCopy(team, runs, svc.ctx.folder(), act);
        } else await act(svc.ctx.ledger());
      },
    );

  program
    .command('verify-bundle <file>')
    .description('verify a bundle: file hashes, seq continuity and chains, counts and heads, signature')
    .option('--key <public-key.pem>', "the signer's public key (pins who must have signed)")
    .action(async (file: string, o: { key?: string }) => {
      let v: BundleVerdict;
      const { verifyBundle } = await bundles();
      try {
        v = await verifyBundle(path.resolve(file), { key: o.key ? path.resolve(o.key) : undefined });
      } catch (e) {
        if (!(e instanceof ProofloopError) || e.code !== 'invalid_input') throw e;
        // Not a bundle we can read at all: a verification failure, with its reason.
        ctx.print({ ok: false, file: path.resolve(file), error: e.message }, () => `FAIL ${e.message}`);
        ctx.setExit(EXIT.findings);
        return;
      }
      ctx.print(v, () => describeVerdict(v));
      if (!v.ok) ctx.setExit(EXIT.findings);
    });
}
