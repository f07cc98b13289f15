import { defineConfig } from 'vitest/config';

// Test files that check what a fresh process has loaded: they need a process of their own.
const OWN_PROCESS = ['test/platform/lazy-modules.test.ts'];

export default defineConfig({
  test: {
    exclude: ['test/fuzz/**', 'node_modules/**'],
    // One migrated PGlite database per run, dumped; each test file loads a copy (test/helpers.ts).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      // Files share their worker's module cache (isolate: false): the app's modules are imported once per worker,
      // not once per file (collect time 147 s → 12 s for the suite). Every file builds its own app and database.
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/fuzz/**', 'node_modules/**', ...OWN_PROCESS],
          isolate: false,
          poolOptions: { forks: { isolate: false } },
        },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS, isolate: true } },
    ],
  },
});
