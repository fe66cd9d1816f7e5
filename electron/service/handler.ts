import type * as z from '../../shared/zod';
import type { Contract, MethodName, ResultOf } from '../../shared/api/contract';

/** The implementation of one contract method: parsed arguments in, its result out. */
export type Handler<M extends MethodName> = (
  args: z.output<Contract[M]['args']>,
) => ResultOf<M> | Promise<ResultOf<M>>;

export type Handlers = { [M in MethodName]: Handler<M> };
