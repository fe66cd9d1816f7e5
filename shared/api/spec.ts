import type { z } from 'zod';

/** One API method: its argument and result schemas. Transports validate args against `args`. */
export interface MethodSpec<A extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  args: A;
  result: R;
  /** One line for --help, the HTTP index and docs. */
  doc: string;
}

export const method = <A extends z.ZodType, R extends z.ZodType>(
  args: A,
  result: R,
  doc: string,
): MethodSpec<A, R> => ({
  args,
  result,
  doc,
});
