/**
 * The simulated model's behaviours, by name. Apart from the runner's API schemas (runner.ts) so
 * that the renderer's task panel can list them without building the contract's zod schemas.
 */
export const VARIANTS = ['careful', 'hasty', 'rogue', 'looping', 'hang', 'leaky', 'crashy'] as const;
export type Variant = (typeof VARIANTS)[number];

export function isVariant(v: string): v is Variant {
  return (VARIANTS as readonly string[]).includes(v);
}

/** What each behaviour does, for the task panel. */
export const VARIANT_TEXT: Record<Variant, string> = {
  careful: 'reads, fixes the bug, runs the tests: a clean pass',
  hasty: 'patches wrong first, sees the tests fail, then fixes it',
  rogue: 'tries forbidden actions (paths outside, network, secrets): the host denies them',
  looping: 'repeats itself until the step budget runs out',
  hang: 'calls a tool that hangs until its timeout',
  leaky: 'reads a file with a credential in it: the redactor keeps it out of the ledger',
  crashy: 'the model process crashes mid-run (resume continues it)',
};
