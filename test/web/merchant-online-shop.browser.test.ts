import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startServer, stopServer, type ServerProcess } from '../hardening/server-process.js';

/**
 * The merchant counter's "Tienda en línea" view in a real browser against the real server: the merchant connects a
 * WooCommerce shop (the secret in a password field, never shown again), sees the URL to paste, and places an order
 * the shop sent without coordinates. Screenshots go to test-artifacts/.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(
  (p): p is string => !!p && existsSync(p),
);
if (!CHROMIUM) console.warn('SKIPPED test/web/merchant-online-shop.browser.test.ts: no chromium found (set CHROMIUM_PATH)');
const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;

describe.skipIf(!CHROMIUM || ON_POSTGRES)('merchant counter: online shop in chromium', () => {
  let server: ServerProcess;
  let browser: Browser;
  const problems: string[] = [];

  beforeAll(async () => {
    const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs'), '--web'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`web build failed:\n${built.stdout}\n${built.stderr}`);
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startServer({ databaseUrl: '', env: { MAP_TILE_URL: 'none' }, timeoutMs: 240_000 });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopServer(server);
  });

  it('connects a WooCommerce shop, shows the URL to paste and never the secret, and places an order that came without coordinates', async () => {
    const base = server.baseUrl;
    const SECRET = 'woo-browser-secret-0123';
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'es-BO' });
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(`${base}/merchant`);
    await page.getByLabel('Correo electrónico').fill('merchant@demo.test');
    await page.getByLabel('Contraseña').fill('Demo-pass-2026');
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await page.getByRole('link', { name: 'Tienda en línea' }).click();
    await page.getByRole('heading', { name: 'Conectar una tienda' }).waitFor();
    expect(await page.locator('#s-secret').getAttribute('type')).toBe('password');
    await page.locator('#s-url').fill('https://tienda.example.com');
    await page.locator('#s-secret').fill(SECRET);
    await page.getByRole('button', { name: 'Conectar' }).click();
    const url = page.locator('#shop-connections output.webhook-url');
    await url.waitFor();
    const webhookUrl = (await url.textContent())!;
    expect(webhookUrl).toMatch(new RegExp(`^${base}/api/v1/shops/woocommerce/[0-9a-f-]{36}$`));
    expect(await page.content()).not.toContain(SECRET);

    // The shop sends an order (no coordinates: WooCommerce has none), signed with the secret.
    const body = JSON.stringify({
      id: 727,
      number: '727',
      status: 'processing',
      currency: 'BOB',
      total: '120.00',
      date_modified_gmt: new Date().toISOString().slice(0, 19),
      shipping: { first_name: 'Ana', last_name: 'Pérez', address_1: 'Av. Arce 2500', city: 'La Paz', country: 'BO' },
      billing: { phone: '71234567' },
      line_items: [{ name: 'Camiseta', quantity: 2 }],
    });
    const res = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-wc-webhook-topic': 'order.created',
        'x-wc-webhook-signature': createHmac('sha256', SECRET).update(body).digest('base64'),
        'x-wc-webhook-delivery-id': '1',
      },
      body,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { outcome: string }).outcome).toBe('awaiting_location');

    await page.reload();
    const card = page.locator('#shop-awaiting article');
    await card.waitFor();
    expect(await card.textContent()).toContain('Ana Pérez');
    await page.screenshot({ path: path.join(ARTIFACTS, 'merchant-online-shop-es.png'), fullPage: true });
    await card.getByLabel('Latitud').fill('-16.5105');
    await card.getByLabel('Longitud').fill('-68.1265');
    await card.getByRole('button', { name: 'Crear envío' }).click();
    await expect
      .poll(async () => `${await page.locator('#shop-awaiting article').count()} ${await page.locator('#toasts').textContent()}`, {
        timeout: 15_000,
      })
      .toMatch(/^0 /);
    await page.getByRole('link', { name: 'Envíos express' }).click();
    await expect.poll(async () => (await page.locator('#express-list').textContent()) ?? '', { timeout: 15_000 }).toContain('Ana Pérez');
    expect(problems).toEqual([]);
  }, 180_000);
});
