import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { pageCsp, registerWeb, webSettings } from '../../src/platform/web.js';
import { registerErrorHandling } from '../../src/platform/http.js';
import { typesOf } from './api-types.js';

/** The pages as the server serves them (src/platform/web.ts): compressed, cached, under a Content-Security-Policy. */

const ROOT = path.resolve(import.meta.dirname, '../..');
let t: TestApp;

beforeAll(async () => {
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs'), '--web'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`web build failed:\n${built.stdout}\n${built.stderr}`);
  // Rate limits as configured by default, so the served document is the one `npm run web:types` reads.
  t = await createTestApp({
    raw: {
      MAP_TILE_URL: 'https://{s}.tiles.example.org/{z}/{x}/{y}.png',
      RATE_LIMIT_ORDERS_PER_MINUTE: undefined,
      RATE_LIMIT_PLANS_PER_MINUTE: undefined,
      RATE_LIMIT_REPORTS_PER_MINUTE: undefined,
    },
  });
}, 300_000);
afterAll(() => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('console pages', () => {
  it('serves the console compressed, revalidated, with a CSP naming only the page, the API and the tile server', async () => {
    const r = await get('/console', { 'accept-encoding': 'gzip, deflate, br' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/html');
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers.vary).toContain('Accept-Encoding');
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("img-src 'self' data: https://*.tiles.example.org");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    const html = brotliDecompressSync(r.rawPayload).toString();
    expect(html).toContain('<meta name="map-tiles" content="https://{s}.tiles.example.org/{z}/{x}/{y}.png"');
    // gzip for a client without brotli, identity for one without either.
    const gz = await get('/console/', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(html);
    expect((await get('/console')).body).toBe(html);
  });

  it('serves hashed assets as immutable and nothing outside the build', async () => {
    const html = (await get('/console')).body;
    const asset = html.match(/\/console\/assets\/[^"]+\.js/)![0];
    const r = await get(asset, { 'accept-encoding': 'gzip' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/javascript');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers['content-encoding']).toBe('gzip');
    for (const bad of ['/console/assets/nope.js', '/console/assets/..%2F..%2Fpackage.json', '/console/assets/%2e%2e/console/index.html']) {
      const x = await get(bad);
      expect(x.statusCode, bad).toBe(404);
      expect(x.headers['content-type']).toContain('application/problem+json');
    }
  });

  it('a browser opening the recipient link gets the tracking page; API clients get the JSON', async () => {
    const token = 'A'.repeat(40);
    const page = await get(`/api/v1/public/tracking/${token}`, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<body class="tracking">');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers.vary).toContain('Accept');
    const json = await get(`/api/v1/public/tracking/${token}`, { accept: 'application/json' });
    expect(json.statusCode).toBe(404);
    expect(json.headers['content-type']).toContain('application/problem+json');
    expect(json.headers.vary).toContain('Accept');
    expect((await get(`/track/${token}`)).body).toContain('<body class="tracking">');
  });

  it('serves the installable driver app under its scope: the page, its service worker, manifest and icons', async () => {
    const bare = await get('/driver');
    expect(bare.statusCode).toBe(308);
    expect(bare.headers.location).toBe('/driver/');
    const page = await get('/driver/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("manifest-src 'self'");
    expect(page.body).toContain('<link rel="manifest" href="/driver/manifest.webmanifest">');
    expect(page.body).toMatch(/\/console\/assets\/driver-[^"]+\.js/);
    const sw = await get('/driver/sw.js');
    expect(sw.statusCode).toBe(200);
    expect(sw.headers['content-type']).toContain('text/javascript');
    expect(sw.headers['service-worker-allowed']).toBe('/driver/');
    expect(sw.headers['cache-control']).toBe('no-cache');
    const manifest = await get('/driver/manifest.webmanifest');
    expect(manifest.headers['content-type']).toContain('application/manifest+json');
    expect(manifest.json()).toMatchObject({ start_url: '/driver/', scope: '/driver/', display: 'standalone' });
    for (const icon of manifest.json().icons as { src: string }[]) {
      const r = await get(icon.src);
      expect(r.statusCode, icon.src).toBe(200);
      expect(r.headers['content-type']).toBe('image/png');
    }
    for (const bad of ['/driver/icons/nope.png', '/driver/icons/..%2F..%2Fpackage.json', '/driver/icons/sw.js'])
      expect((await get(bad)).statusCode, bad).toBe(404);
  });

  it('answers 503 with a problem when the pages are not built', async () => {
    const app = Fastify();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'web-empty-'));
    try {
      registerErrorHandling(app);
      await registerWeb(app, {}, dir);
      const r = await app.inject({ method: 'GET', url: '/console' });
      expect(r.statusCode).toBe(503);
      expect(r.json().code).toBe('WEB_NOT_BUILT');
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the service worker's cache after the page's build: a new shell is a new worker; each page its own", async () => {
    const app = Fastify();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'web-sw-'));
    try {
      mkdirSync(path.join(dir, 'pwa'));
      mkdirSync(path.join(dir, 'driver'));
      mkdirSync(path.join(dir, 'merchant'));
      writeFileSync(path.join(dir, 'pwa/sw.js'), readFileSync(path.join(ROOT, 'web/static/pwa/sw.js')));
      writeFileSync(path.join(dir, 'driver/index.html'), '<script src="/console/assets/driver-aaaa.js"></script>');
      writeFileSync(path.join(dir, 'merchant/index.html'), '<script src="/console/assets/merchant-aaaa.js"></script>');
      registerErrorHandling(app);
      await registerWeb(app, {}, dir);
      const version = async (page: string) => {
        const r = await app.inject({ method: 'GET', url: `/${page}/sw.js` });
        expect(r.statusCode).toBe(200);
        expect(r.body).not.toContain('__SHELL_VERSION__');
        return r.body.match(/const VERSION = '([0-9a-f]{16})'/)![1];
      };
      const first = await version('driver');
      expect(await version('driver')).toBe(first);
      expect(await version('merchant')).not.toBe(first);
      // A new build: the shell names other assets.
      writeFileSync(path.join(dir, 'driver/index.html'), '<script src="/console/assets/driver-bbbb.js"></script>');
      utimesSync(path.join(dir, 'driver/index.html'), new Date(), new Date(Date.now() + 5000));
      expect(await version('driver')).not.toBe(first);
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes the tile server from MAP_TILE_URL: OpenStreetMap by default, none, or refused when malformed', () => {
    expect(webSettings({}).tileUrl).toBe('https://tile.openstreetmap.org/{z}/{x}/{y}.png');
    expect(pageCsp(webSettings({}))).toContain("img-src 'self' data: https://tile.openstreetmap.org;");
    expect(webSettings({ MAP_TILE_URL: 'none' }).tileUrl).toBe('');
    expect(pageCsp(webSettings({ MAP_TILE_URL: 'none' }))).toContain("img-src 'self' data:;");
    expect(() => webSettings({ MAP_TILE_URL: 'ftp://x/{z}/{x}/{y}' })).toThrow(/MAP_TILE_URL/);
    expect(() => webSettings({ MAP_TILE_URL: 'https://tiles.example.org/tile.png' })).toThrow(/MAP_TILE_URL/);
  });

  it('web/src/api-types.ts matches the OpenAPI document the server serves (else: npm run web:types)', async () => {
    const doc = (await get('/api/v1/openapi.json')).json();
    const committed = readFileSync(path.join(ROOT, 'web/src/api-types.ts'), 'utf8');
    const now = await typesOf(doc);
    mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
    if (committed !== now) writeFileSync(path.join(ROOT, 'test-artifacts/api-types.expected.ts'), now);
    expect(
      committed === now,
      'web/src/api-types.ts is stale: run `npm run web:types` (expected text in test-artifacts/api-types.expected.ts)',
    ).toBe(true);
  });
});
