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
        { url: server.url, port: server.port, folder: svc.ctx.folder() },
        () => `ProofLoop web mode for ${svc.ctx.folder()}\nopen ${server.url}\n(Ctrl-C to stop)`,
      );
      await new Promise<void>((resolve) => {
        // The folder's watchers would keep the process alive after the server has closed.
        const stop = () => void server.close().then(() => (svc.closeFolder(), resolve()));
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
