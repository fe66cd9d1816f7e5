// Lint gates, including the layering of DESIGN.md: shared/ is pure, renderer/ sees only shared/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const nodeOnly = [
  'node:*',
  'fs',
  'path',
  'os',
  'crypto',
  'child_process',
  'electron',
  'better-sqlite3',
  'chokidar',
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'release/**',
      'node_modules/**',
      'test/fixtures/**',
      'tasks/**',
      'test-results/**',
      'test/artifacts/**',
      'bench/out/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Scripts the benches run inside Chromium's pages.
    files: ['bench/page/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Issue 24: per-run and per-key state keyed by names from files (run ids, aggregate ids, kinds,
    // payload keys) never lives in a plain `{}`, where `__proto__`, `constructor` or `toString`
    // find Object.prototype's members: a Map, or shared/dict.ts's dict() (no prototype).
    // Names from files reach every layer (adapters, ledger engines, runner, views), so the rule holds
    // everywhere; a literal object whose keys the code itself chooses is not affected.
    files: [
      'electron/**/*.ts',
      'shared/**/*.ts',
      'renderer/**/*.{ts,tsx}',
      'scripts/**/*.mjs',
      'bench/**/*.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'VariableDeclarator[id.typeAnnotation.typeAnnotation.typeName.name=/^(Record|Obj)$/] > ObjectExpression.init[properties.length=0]',
          message:
            'A Record keyed by names from files must not start as {} (Object.prototype answers __proto__, constructor, ...): use a Map or dict() from shared/dict.ts.',
        },
        {
          selector:
            'PropertyDefinition[typeAnnotation.typeAnnotation.typeName.name=/^(Record|Obj)$/] > ObjectExpression.value[properties.length=0]',
          message:
            'A Record keyed by names from files must not start as {}: use a Map or dict() from shared/dict.ts.',
        },
        {
          selector: "AssignmentExpression[operator='??='] > ObjectExpression.right[properties.length=0]",
          message: 'Per-key state must not start as {}: use a Map or dict() from shared/dict.ts.',
        },
      ],
    },
  },
  {
    files: ['shared/**/*.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeOnly, message: 'shared/ is pure TypeScript: no Node, Electron or SQLite.' },
            {
              regex: '^zod(/|$)',
              message:
                "Schemas import zod as `import * as z from '…/shared/zod'` (zod/mini with its messages).",
            },
            {
              group: ['**/electron/**', '**/renderer/**'],
              message: 'shared/ imports nothing from electron/ or renderer/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: nodeOnly,
              message: 'The renderer is untrusted and has no Node: talk to the API instead.',
            },
            { group: ['**/electron/**'], message: 'renderer/ imports only shared/.' },
            {
              regex: '^zod(/|$)',
              message:
                "Schemas import zod as `import * as z from '…/shared/zod'` (zod/mini with its messages).",
            },
          ],
        },
      ],
    },
  },
  {
    // zod's classic build is ~10 MB and ~0.1 s of every process and worker (shared/zod.ts).
    files: ['electron/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^zod(/|$)',
              message:
                "Schemas import zod as `import * as z from '…/shared/zod'` (zod/mini with its messages).",
            },
          ],
        },
      ],
    },
  },
);
