import { defineConfig } from 'vitest/config';

// Test kinds live apart and run alone: `npm run test:unit`, `npm run test:int`.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.spec.ts'],
          environment: 'node',
          // The property tests fold hundreds of generated runs: 1–3 s on a quiet machine, past the
          // default 5 s on a loaded 2-core one.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.spec.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
