#!/usr/bin/env node
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ProofloopError } from '../../shared/result';
import { leaveLean } from '../lean';
import { closeTeamLedgers, createCliContext, EXIT } from './context';
import { registerBundleCommands } from './commands/bundle';
import { registerLedgerCommands } from './commands/ledger';
import { registerServeCommands } from './commands/serve';
import { registerStateCommands } from './commands/state';
import { registerRunnerCommands } from './commands/runner';
import { registerOtlpCommands } from './commands/otlp';
import { registerTeamCommands } from './commands/team';

const VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command('proofloop')
    .description(
      'ProofLoop: inspect, verify, rerun and export AI-agent runs kept in an append-only, hash-chained ledger.\n' +
        'Commands act on the runs folder given by --folder, else the current directory.',
    )
    .version(VERSION)
    .option('--folder <dir>', 'runs folder (default: the current directory)')
    .option('--json', 'print machine-readable JSON instead of text')
    .option('--tasks <dir>', 'task catalog directory (default: the built-in tasks)')
    .option(
      '--ledger <url>',
      'a team ledger on PostgreSQL (postgres://user@host/db; default: PROOFLOOP_LEDGER): runs, events, verify and state read it',
    )
    .showHelpAfterError('(run `proofloop --help` for usage)')
    .exitOverride();
  const ctx = createCliContext(program);
  registerLedgerCommands(program, ctx);
  registerBundleCommands(program, ctx);
  registerServeCommands(program, ctx);
  registerStateCommands(program, ctx);
  registerRunnerCommands(program, ctx);
  registerOtlpCommands(program, ctx);
  registerTeamCommands(program, ctx);
  program.addHelpText(
    'after',
    `
Exit codes: 0 ok; 1 findings (a verification failed, a run did not pass); 2 usage or I/O error.

Examples:
  proofloop open ./runs                         import every events.jsonl under ./runs
  proofloop --folder ./runs runs                list runs
  proofloop --folder ./runs events demo-001 --from 2 --kind model_proposed
  proofloop --folder ./runs verify demo-001     verify a run; or: proofloop verify path/to/events.jsonl
  proofloop --folder ./runs append my-run run_started '{"task_id":"t","goal":"g","agent":{"name":"me"}}'`,
  );
  return program;
}

/**
 * An error as one line: a ProofloopError's message, anything else as "internal error: …" without
 * its stack (PROOFLOOP_DEBUG=1 prints the stack, for a bug report).
 */
function oneLine(e: unknown): string {
  if (e instanceof ProofloopError) return e.message;
  const err = e instanceof Error ? e : new Error(String(e));
  if (process.env.PROOFLOOP_DEBUG === '1' && err.stack) return err.stack;
  return `internal error: ${err.message.split('\n')[0]} (PROOFLOOP_DEBUG=1 shows where)`;
}

export async function main(argv: readonly string[]): Promise<number> {
  // `proofloop events … | head`: a reader that stops early is no error (and no stack trace). The
  // command's own work (an import) is committed transaction by transaction, so stopping loses none.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(EXIT.ok);
    throw e;
  });
  const program = buildProgram();
  // Only serve, which holds a page's calls for hours, stays in the lean mode bin/proofloop.js
  // started it in (lean.ts); every other command is one job that may allocate and compute a lot.
  program.hook('preAction', (_program, command) => {
    if (command.name() !== 'serve') leaveLean();
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (e) {
    // Commander prints its own parse errors before it throws; an InvalidArgumentError thrown by an
    // action (an argument that parsed but does not hold up) reaches here unprinted.
    if (e instanceof InvalidArgumentError) {
      process.stderr.write(`proofloop: ${e.message}\n`);
      return EXIT.usage;
    }
    if (e instanceof CommanderError) {
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    process.stderr.write(`proofloop: ${oneLine(e)}\n`);
    return EXIT.usage;
  } finally {
    await closeTeamLedgers();
  }
}

const isEntry = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry || process.env.PROOFLOOP_CLI_ENTRY === '1') {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
