/**
 * Zod for every schema here, imported as `import * as z from '…/shared/zod'`: its small build
 * (`zod/mini`, functions in place of methods) with the English messages the classic build loads by
 * itself. The classic build cost each process and each worker thread ~10 MB and ~0.1 s at start
 * (a bundle of the API contract on it: 793 KB, 52.7 MB RSS against bare node's 40.2; zod/mini with
 * its messages: 31 KB), whatever the command. Re-exported with `export *`, not as one namespace
 * object: a namespace in an export keeps every one of its members in the bundle.
 */
/* eslint-disable no-restricted-imports -- the one module that imports zod */
import en from 'zod/v4/locales/en.js';
import { config } from 'zod/mini';

config(en());

export * from 'zod/mini';
