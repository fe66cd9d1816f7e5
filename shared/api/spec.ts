import * as z from '../zod';

/** One API method: its argument and result schemas. Transports validate args against `args`. */
export interface MethodSpec<
  A extends z.ZodMiniType = z.ZodMiniType,
  R extends z.ZodMiniType = z.ZodMiniType,
> {
  args: A;
  result: R;
  /** One line for --help, the HTTP index and docs. */
  doc: string;
}

/**
 * Arguments are strict: an unknown field is a `bad_args` naming it (a typo or a probe is an error,
 * not silently dropped). Every method's arguments are one object, made strict here once.
 */
export const method = <A extends z.ZodMiniType, R extends z.ZodMiniType>(
  args: A,
  result: R,
  doc: string,
): MethodSpec<A, R> => ({
  args: (args instanceof z.ZodMiniObject ? z.strictObject(args.shape) : args) as A,
  result,
  doc,
});
