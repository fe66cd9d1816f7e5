import path from 'node:path';
import { openDefaultFolder } from '../../shell/first-run';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { CliContext } from '../context';
import { startWebServer } from '../../transports/http';
import { rendererDir } from '../../paths';

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
    .action(async (folder: string | undefined, o: { port?: number; firstRun?: boolean } & OtlpFlags) => {
      if (folder) program.setOptionValue('folder', path.resolve(folder));
      const svc = await ctx.service({ create: Boolean(o.firstRun) });
      if (o.firstRun) await openDefaultFolder(svc, svc.ctx.folder());
      svc.keepLive();
      const server = await startWebServer(svc, { port: o.port, staticDir: rendererDir() });
      // Loaded only by serve: protobufjs and the OTLP definitions cost every other command time.
      const { otlpLine, startOtlpFor } = await import('../../otlp/start');
      const otlp = o.otlp ? await startOtlpFor(svc, { port: o.otlpPort, token: o.otlpToken }) : null;
      ctx.print(
        { url: server.url, port: server.port, folder: svc.ctx.folder(), otlp: otlp?.info ?? null },
        () =>
          `ProofLoop web mode for ${svc.ctx.folder()}\nopen ${server.url}\n${otlpLine(otlp)}\n(Ctrl-C to stop)`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => void Promise.all([server.close(), otlp?.receiver?.close()]).then(() => resolve());
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
