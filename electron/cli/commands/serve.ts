import path from 'node:path';
import { openDefaultFolder } from '../../shell/first-run';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { CliContext } from '../context';
import { startWebServer } from '../../transports/http';
import { rendererDir } from '../../paths';
import { goLean } from '../../lean';

interface OtlpFlags {
  otlp: boolean;
  otlpPort?: number;
  otlpToken?: string | true;
}

function portArg(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is 0-65535');
  return n;
}

export function registerServeCommands(program: Command, ctx: CliContext): void {
  program
    .command('serve [folders...]')
    .description(
      'web mode: serve the inspector on 127.0.0.1 for any browser (prints the URL with its token); the first folder is opened, every one named can be opened from the page (Open folder); ' +
        'with --ledger postgres://… the team ledger is opened instead (the folder is then its local folder)',
    )
    .option('--port <port>', 'port (default: any free port)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        throw new InvalidArgumentError('--port must be 0-65535');
      return n;
    })
    .option(
      '--first-run',
      'create the folder if needed and, when it has no runs, make a few of the built-in tasks',
    )
    .option(
      '--otlp-port <port>',
      'port of the OTLP/HTTP receiver on 127.0.0.1 (default 4318; 0: any free port)',
      portArg,
    )
    .option('--no-otlp', 'do not receive OpenTelemetry (OTLP/HTTP traces and logs)')
    .option(
      '--otlp-token [token]',
      'require this bearer token from OTLP senders (no value: a random one, printed)',
    )
    .action(async (folders: string[], o: { port?: number; firstRun?: boolean } & OtlpFlags) => {
      goLean();
      const folder = folders[0];
      if (folder) program.setOptionValue('folder', path.resolve(folder));
      // Listening first, importing after: the page shows the runs, and a big session's first rows,
      // while the folder is still read (closing stops that import between two commits).
      // --first-run looks at the runs before making any, so it waits for the import.
      const svc = await ctx.service({ create: Boolean(o.firstRun), background: !o.firstRun });
      if (o.firstRun) await openDefaultFolder(svc, svc.ctx.folder());
      svc.keepLive();
      // The page may switch between the folders named here (its Open folder menu), and no others:
      // a typed path is refused (the window is untrusted; the command line is the user's choice).
      for (const f of [...folders.slice(1)].reverse()) svc.trustFolder(f);
      // A team ledger's local folder holds workspaces, not runs to open: the page is not offered it.
      if (svc.ctx.sqlite()) svc.trustFolder(svc.ctx.folder());
      const server = await startWebServer(svc, { port: o.port, staticDir: rendererDir() });
      // Loaded only by serve with its receiver: protobufjs and the OTLP definitions (a chunk of
      // their own) cost every other command, and serve --no-otlp, time and memory.
      const start = o.otlp ? await import('../../otlp/start') : null;
      const otlp = start ? await start.startOtlpFor(svc, { port: o.otlpPort, token: o.otlpToken }) : null;
      ctx.print(
        {
          url: server.url,
          port: server.port,
          token: server.token,
          folder: svc.ctx.folder(),
          ledger: svc.ctx.engine().location,
          engine: svc.ctx.engine().engine,
          otlp: otlp?.info ?? null,
        },
        () =>
          `ProofLoop web mode for ${svc.ctx.sqlite() ? svc.ctx.folder() : `the team ledger ${svc.ctx.engine().location} (local folder ${svc.ctx.folder()})`}\nopen ${server.url}\n${start && otlp ? start.otlpLine(otlp) : 'OTLP receiver off (--no-otlp)'}\n(Ctrl-C to stop)`,
      );
      await untilSignal(async () => {
        await Promise.all([server.close(), otlp?.receiver?.close()]);
        // The import under way (stopped and waited for), the watcher, the snapshot worker, the append
        // helper and the ledger: nothing left to hold the process.
        await svc.closeFolder();
      });
    });
}

/** How long a shutdown may take before the process ends anyway (the signal was meant). */
const SHUTDOWN_GRACE_MS = 3000;

/**
 * Resolves after the first SIGINT or SIGTERM once `close` has run. Should a handle still hold the
 * process after the grace period (a tool process of a run that was going on), it exits regardless;
 * a second signal exits at once.
 */
function untilSignal(close: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.once(signal, () => process.exit(130));
      setTimeout(() => process.exit(process.exitCode ?? 0), SHUTDOWN_GRACE_MS).unref();
      void close()
        .catch((e: Error) => process.stderr.write(`proofloop: while stopping: ${e.message}\n`))
        .finally(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
