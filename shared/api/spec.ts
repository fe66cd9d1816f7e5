import { z } from 'zod';

/** One API method: its argument and result schemas. Transports validate args against `args`. */
export interface MethodSpec<A extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  args: A;
  result: R;
  /** One line for --help, the HTTP index and docs. */
  doc: string;
}

/**
 * Arguments are strict: an unknown field is a `bad_args` naming it (a typo or a probe is an error,
 * not silently dropped). Every method's arguments are one object, made strict here once.
 */
export const method = <A extends z.ZodType, R extends z.ZodType>(
  args: A,
  result: R,
  doc: string,
): MethodSpec<A, R> => ({
  args: (args instanceof z.ZodObject ? args.strict() : args) as A,
  result,
  doc,
});
