/**
 * Entry of the judge process: runs the task's test command on a run's workspace and prints one
 * JSON verdict line on stdout. It is given the workspace, the command and a timeout, nothing else:
 * it does not know where the ledger is and cannot write it; the host appends judge_verdict.
 */
import { sha256Hex } from '../crypto';
import { redactText } from '../ledger/artifact-store';
import { runCommandLine } from './exec';

export interface JudgeInput {
  workspace: string;
  command: string;
  timeout_ms: number;
}

export interface Verdict {
  passed: boolean;
  tests_passed: number;
  tests_failed: number;
  command: string;
  exit_code: number | null;
  timed_out: boolean;
  /** sha256 of the (redacted) output. */
  output_digest: string;
  /** The test output, redacted. */
  output: string;
}

/** Counts of a TAP-like report: `# pass N` / `# fail N` when present, else `ok` / `not ok` lines. */
export function countTests(output: string): { passed: number; failed: number } {
  const pass = /^# pass (\d+)\s*$/m.exec(output);
  const fail = /^# fail (\d+)\s*$/m.exec(output);
  if (pass && fail) return { passed: Number(pass[1]), failed: Number(fail[1]) };
  return {
    passed: (output.match(/^ok \d+/gm) ?? []).length,
    failed: (output.match(/^not ok \d+/gm) ?? []).length,
  };
}

export async function judge(input: JudgeInput): Promise<Verdict> {
  const r = await runCommandLine(input.workspace, input.command, {
    timeoutMs: input.timeout_ms,
    maxBytes: 1 << 20,
  });
  const output = redactText(
    r.output + (r.timed_out ? `\n[judge: timed out after ${input.timeout_ms} ms]` : ''),
  ).text;
  const counts = countTests(output);
  return {
    passed: r.exit_code === 0 && !r.timed_out && counts.failed === 0 && counts.passed > 0,
    tests_passed: counts.passed,
    tests_failed: counts.failed,
    command: input.command,
    exit_code: r.exit_code,
    timed_out: r.timed_out,
    output_digest: sha256Hex(output),
    output,
  };
}

const entry = process.argv[1] ?? '';
if (/judge(-process)?\.(ts|js|mjs)$/.test(entry)) {
  const input = JSON.parse(process.argv[2] ?? '{}') as JudgeInput;
  judge(input).then(
    (v) => process.stdout.write(JSON.stringify(v) + '\n'),
    (e: Error) => {
      process.stderr.write(`judge: ${e.stack ?? e.message}\n`);
      process.exitCode = 3;
    },
  );
}
