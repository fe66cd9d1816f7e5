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
    files: ['shared/**/*.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeOnly, message: 'shared/ is pure TypeScript: no Node, Electron or SQLite.' },
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
          ],
        },
      ],
    },
  },
);
