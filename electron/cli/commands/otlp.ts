import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from '../context';

export function registerOtlpCommands(program: Command, ctx: CliContext): void {
  program
    .command('export-otlp <runs...>')
    .description(
      'send runs as OpenTelemetry GenAI spans (OTLP) to Phoenix, Jaeger, Langfuse or a collector, or write them as OTLP JSON',
    )
    .option('--out <file>', 'write one OTLP JSON ExportTraceServiceRequest to this file')
    .option(
      '--endpoint <url>',
      'POST to this OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318; /v1/traces is added when no path is given)',
    )
    .option('--protocol <protocol>', 'http/protobuf (default) or http/json, for --endpoint', (v) => {
      if (v !== 'http/protobuf' && v !== 'http/json')
        throw new InvalidArgumentError('--protocol is http/protobuf or http/json');
      return v;
    })
    .option(
      '--header <name=value...>',
      'request headers for --endpoint (also read from OTEL_EXPORTER_OTLP_HEADERS)',
    )
    .addHelpText(
      'after',
      '\nEach span also carries its ProofLoop event (proofloop.kind, proofloop.payload), so a run received back by\n' +
        '`proofloop serve` (its OTLP receiver) is the same run, event for event.',
    )
    .action(
      async (
        runs: string[],
        o: { out?: string; endpoint?: string; protocol?: 'http/protobuf' | 'http/json'; header?: string[] },
      ) => {
        if (!o.out === !o.endpoint)
          throw new InvalidArgumentError('give one of --out <file> or --endpoint <url>');
        // Loaded here, not at startup: protobufjs and the OTLP definitions would cost every command.
        const { exportRunsOtlp, parseOtlpHeaders, sendOtlp } = await import('../../otlp/export');
        const ledger = await ctx.ledger();
        if (o.out) {
          const { requests, spans } = exportRunsOtlp(ledger, runs);
          const out = path.resolve(o.out);
          // One request holds every run: the file is what a /v1/traces POST would carry.
          const all = { resourceSpans: requests.flatMap((r) => r.resourceSpans as unknown[]) };
          writeFileSync(out, JSON.stringify(all) + '\n');
          ctx.print(
            { out, runs: runs.length, spans },
            () => `wrote ${spans} spans of ${runs.length} run(s) to ${out}`,
          );
          return;
        }
        const headers = {
          ...parseOtlpHeaders(process.env.OTEL_EXPORTER_OTLP_HEADERS),
          ...parseOtlpHeaders((o.header ?? []).join(',')),
        };
        const { requests, spans } = exportRunsOtlp(ledger, runs, 512);
        const r = await sendOtlp(o.endpoint!, requests, { protocol: o.protocol, headers });
        ctx.print(
          { endpoint: o.endpoint, runs: runs.length, spans, requests: r.requests, rejected: r.rejected },
          () =>
            `sent ${spans} spans of ${runs.length} run(s) to ${o.endpoint} in ${r.requests} request(s)` +
            (r.rejected ? `; ${r.rejected} rejected` : ''),
        );
        if (r.rejected) ctx.setExit(1);
      },
    );
}
