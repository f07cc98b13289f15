import path from 'node:path';
import { defineConfig } from 'vite';

// Two pages (console, tracking) built to dist/web and served by the API server under /console (src/platform/web.ts).
const root = import.meta.dirname;
export default defineConfig({
  root,
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: path.resolve(root, '../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Leaflet and the pages' code; the budget (300 KB compressed) is checked by test/web/console.browser.test.ts.
    chunkSizeWarningLimit: 400,
    rollupOptions: {
      input: { console: path.resolve(root, 'console/index.html'), tracking: path.resolve(root, 'tracking/index.html') },
    },
  },
});
