import path from 'node:path';
import { defineConfig } from 'vite';

// The pages (console, tracking, driver, merchant) built to dist/web and served by the API server (src/platform/web.ts); their
// scripts under /console/assets. web/static (the service worker, manifests, icons) is copied as is.
const root = import.meta.dirname;
export default defineConfig({
  root,
  base: '/console/',
  publicDir: path.resolve(root, 'static'),
  logLevel: 'warn',
  build: {
    outDir: path.resolve(root, '../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Leaflet and the pages' code; the budget (300 KB compressed) is checked by test/web/console.browser.test.ts.
    chunkSizeWarningLimit: 400,
    rolldownOptions: {
      input: {
        console: path.resolve(root, 'console/index.html'),
        tracking: path.resolve(root, 'tracking/index.html'),
        driver: path.resolve(root, 'driver/index.html'),
        merchant: path.resolve(root, 'merchant/index.html'),
      },
    },
  },
});
