/**
 * The simulated model's behaviours, by name. Apart from the runner's API schemas (runner.ts) so
 * that the renderer's task panel can list them without building the contract's zod schemas.
 */
export const VARIANTS = ['careful', 'hasty', 'rogue', 'looping', 'hang', 'leaky', 'crashy'] as const;
export type Variant = (typeof VARIANTS)[number];

export function isVariant(v: string): v is Variant {
  return (VARIANTS as readonly string[]).includes(v);
}
