import { defineConfig } from 'vitest/config';

/** `npm run fuzz`: only the long fuzz runs (the default config excludes test/fuzz). */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/fuzz/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
