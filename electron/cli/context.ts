import { mkdirSync } from 'node:fs';
import type { Command } from 'commander';
import { ProofloopService } from '../service/service';
import type { Ledger } from '../ledger';
import { isPostgresUrl, ledgerSpec } from '../ledger/open-engine';

/** Exit codes (README): 0 ok, 1 findings (verification failed, run did not pass), 2 usage or I/O error. */
export const EXIT = { ok: 0, findings: 1, usage: 2 } as const;

export interface CliContext {
  /**
   * The service with the --folder runs folder open (imports new JSONL bytes on first use). Commands
   * that make runs (`open`, `run`, `append`, `serve`) pass `create` so a new folder is made; a
   * command about one run passes `run`, and only that run's source is read (not the whole folder).
   * `background`: the folder's import goes on after this returns (serve: see openFolder).
   * With `--ledger postgres://…` (or PROOFLOOP_LEDGER) the service has that team ledger open instead,
   * and --folder is its local folder (workspaces, artifacts, bundles).
   */
  service(opts?: { create?: boolean; run?: string; background?: boolean }): Promise<ProofloopService>;
  /** The ledger; `run`: the command is about that run only (see `service`). */
  ledger(run?: string): Promise<Ledger>;
  /** Global options as parsed. */
  opts(): { folder: string; json: boolean; tasks?: string };
  out(text: string): void;
  /** Prints JSON or, on a terminal, the human form. */
  print(value: unknown, human: () => string): void;
  setExit(code: number): void;
  /** Whether stdout is a terminal (progress lines go to stderr only then). */
  tty: boolean;
}

/** Services of this process with a team ledger open: their connections are closed when the command ends. */
const teamServices = new Set<ProofloopService>();

/** Closes the team ledgers commands opened (a pool's idle connections would hold the process ~10 s). */
export async function closeTeamLedgers(): Promise<void> {
  const all = [...teamServices];
  teamServices.clear();
  await Promise.all(all.map((s) => s.closeFolder().catch(() => undefined)));
}

export function createCliContext(program: Command): CliContext {
  let svc: ProofloopService | null = null;
  const ctx: CliContext = {
    opts: () => {
      const o = program.opts<{ folder?: string; json?: boolean; tasks?: string }>();
      return { folder: o.folder ?? process.cwd(), json: o.json ?? false, tasks: o.tasks };
    },
    async service(opts = {}) {
      if (!svc) {
        if (opts.create) mkdirSync(ctx.opts().folder, { recursive: true });
        svc = new ProofloopService({ tasksDir: ctx.opts().tasks });
        const team = ledgerSpec(program.opts<{ ledger?: string }>().ledger);
        if (isPostgresUrl(team)) {
          await svc.openTeam(team, { folder: ctx.opts().folder });
          teamServices.add(svc);
        } else await svc.openFolder(ctx.opts().folder, { only: opts.run, background: opts.background });
      }
      return svc;
    },
    async ledger(run) {
      return (await ctx.service({ run })).ctx.ledger();
    },
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : text + '\n'),
    print(value, human) {
      ctx.out(ctx.opts().json ? JSON.stringify(value, null, 2) : human());
    },
    setExit(code) {
      process.exitCode = Math.max(Number(process.exitCode ?? 0), code);
    },
    tty: Boolean(process.stdout.isTTY),
  };
  return ctx;
}
