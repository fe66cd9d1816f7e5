import path from 'node:path';
import { openDefaultFolder } from '../../shell/first-run';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { CliContext } from '../context';
import { startWebServer } from '../../transports/http';
import { rendererDir } from '../../paths';

export function registerServeCommands(program: Command, ctx: CliContext): void {
  program
    .command('serve [folder]')
    .description('web mode: serve the inspector on 127.0.0.1 for any browser (prints the URL with its token)')
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
    .action(async (folder: string | undefined, o: { port?: number; firstRun?: boolean }) => {
      if (folder) program.setOptionValue('folder', path.resolve(folder));
      const svc = await ctx.service({ create: Boolean(o.firstRun) });
      if (o.firstRun) await openDefaultFolder(svc, svc.ctx.folder());
      svc.keepLive();
      const server = await startWebServer(svc, { port: o.port, staticDir: rendererDir() });
      ctx.print(
        { url: server.url, port: server.port, token: server.token, folder: svc.ctx.folder() },
        () => `ProofLoop web mode for ${svc.ctx.folder()}\nopen ${server.url}\n(Ctrl-C to stop)`,
      );
      await untilSignal(async () => {
        await server.close();
        // The watcher, the snapshot worker, the append helper and the ledger: nothing left to hold the process.
        svc.closeFolder();
      });
    });
}

/** How long a shutdown may take before the process ends anyway (the signal was meant). */
const SHUTDOWN_GRACE_MS = 800;

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
