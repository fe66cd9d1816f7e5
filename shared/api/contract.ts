import type * as z from '../zod';
import { bundleMethods } from './bundle';
import { ledgerMethods, ledgerPushes } from './ledger';
import { runnerMethods } from './runner';
import { stateMethods } from './state';
import type { MethodSpec } from './spec';

/**
 * The one API contract. Each domain keeps its methods in its own file (shared/api/<domain>.ts) and
 * is spread in here; the service implements each method once, and Electron IPC, HTTP and the CLI
 * only carry calls to it. Adding a method: one entry in a domain file, one handler.
 */
export const contract = {
  ...ledgerMethods,
  ...bundleMethods,
  ...runnerMethods,
  ...stateMethods,
} as const satisfies Record<string, MethodSpec>;

export const pushes = {
  ...ledgerPushes,
} as const satisfies Record<string, z.ZodMiniType>;

export type Contract = typeof contract;
export type MethodName = keyof Contract;
export type ArgsOf<M extends MethodName> = z.input<Contract[M]['args']>;
export type ResultOf<M extends MethodName> = z.output<Contract[M]['result']>;
export type PushName = keyof typeof pushes;
export type PushOf<P extends PushName> = z.output<(typeof pushes)[P]>;

export const METHOD_NAMES = Object.keys(contract) as MethodName[];
export const PUSH_NAMES = Object.keys(pushes) as PushName[];
export const isMethodName = (s: string): s is MethodName => Object.prototype.hasOwnProperty.call(contract, s);
