import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, login, startServer, stopServer } from '../hardening/server-process.js';
import { logIn, skipBrowser, startRig, type BrowserRig } from './browser.js';

/**
 * The console's write-only secrets (Settings, administrators): a merchant's chat channel token and a webhook
 * subscription's signing secret, through password fields, in a real browser against the real server on the
 * embedded database (which generates its DATA_DIR/secrets-key). Screenshots go to test-artifacts/.
 */

const SKIP = skipBrowser('test/web/console-secrets.browser.test.ts');

describe.skipIf(SKIP)('console: write-only secrets in chromium', () => {
  let rig: BrowserRig;

  beforeAll(async () => {
    // No SECRETS_KEY: the embedded default generates its key into DATA_DIR.
    rig = await startRig('console-secrets', {
      env: { SECRETS_KEY: '', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    });
  }, 300_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('an administrator sets a merchant chat token and a webhook secret; the page says saved and never shows them', async () => {
    const base = rig.base;
    expect(statSync(path.join(rig.dataDir, 'secrets-key')).mode & 0o777).toBe(0o600);
    const admin = await login(base, 'admin@demo.test');
    const merchant = (await api(base, admin, 'GET', '/merchants?limit=1')).body.data[0] as { id: string; name: string };
    const sub = await api(base, admin, 'POST', '/webhooks/subscriptions', {
      url: 'http://127.0.0.1:9/hook',
      event_types: ['*'],
      description: 'ERP',
    });
    expect(sub.status).toBe(201);
    const TOKEN = 'EAAG-browser-chat-token-0123456789';
    const SECRET = 'browser-webhook-secret-0123456789';

    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'es-BO' });
    const page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/console`);
    await logIn(page, 'admin@demo.test');
    await page.getByRole('link', { name: 'Configuración' }).click();
    const chat = page.locator('#s-chat-token');
    await chat.getByRole('heading', { name: 'Token del canal de chat' }).waitFor();
    await page.locator('#s-chat-token-pick').selectOption(merchant.id);
    await expect.poll(() => page.locator('#s-chat-token-state').textContent()).toBe('Sin configurar');
    expect(await page.locator('#s-chat-token-value').getAttribute('type')).toBe('password');
    await page.locator('#s-chat-token-value').fill(TOKEN);
    await chat.getByRole('button', { name: 'Guardar' }).click();
    await expect.poll(() => page.locator('#s-chat-token-done').textContent()).toBe('Guardado');
    expect(await page.locator('#s-chat-token-state').textContent()).toMatch(/^Configurado el /);
    expect(await page.locator('#s-chat-token-value').inputValue()).toBe('');

    // A secret the server refuses (a space): its problem in Spanish, nothing saved; then a good one.
    const hook = page.locator('#s-webhook-secret');
    await page.locator('#s-webhook-secret-pick').selectOption(sub.body.id);
    await page.locator('#s-webhook-secret-value').fill('con espacios no vale 0123');
    await hook.getByRole('button', { name: 'Guardar' }).click();
    await expect
      .poll(() => page.locator('#s-webhook-secret-error').textContent())
      .toBe('Secreto no válido: de 16 a 256 caracteres visibles, sin espacios.');
    expect(await page.locator('#s-webhook-secret-done').textContent()).toBe('');
    await page.locator('#s-webhook-secret-value').fill(SECRET);
    await hook.getByRole('button', { name: 'Guardar' }).click();
    await expect.poll(() => page.locator('#s-webhook-secret-done').textContent()).toBe('Guardado');
    expect(await page.locator('#s-webhook-secret-error').textContent()).toBe('');
    await rig.shot(page, 'console-secrets-es', { fullPage: true });

    // Stored (the API says set), never shown: not in the page, not in any response the page read.
    expect((await api(base, admin, 'GET', `/admin/merchants/${merchant.id}/channels`)).body).toMatchObject({ chat_token_set: true });
    expect((await api(base, admin, 'GET', `/webhooks/subscriptions/${sub.body.id}`)).body).toMatchObject({ secret_set: true });
    const html = await page.content();
    expect(html).not.toContain(TOKEN);
    expect(html).not.toContain(SECRET);

    // English, on a phone: the same forms, every string translated.
    const phone = await rig.browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', isMobile: true, hasTouch: true });
    const p2 = await phone.newPage();
    rig.watch(p2);
    await p2.goto(`${base}/console`);
    await p2.locator('#lang').selectOption('en');
    await p2.getByLabel('Email').fill('admin@demo.test');
    await p2.getByLabel('Password').fill('Demo-pass-2026');
    await p2.getByRole('button', { name: 'Log in' }).click();
    await p2.getByRole('link', { name: 'Settings' }).click();
    await p2.locator('#s-chat-token').getByRole('heading', { name: 'Chat channel token' }).waitFor();
    await p2.locator('#s-chat-token-pick').selectOption(merchant.id);
    await expect.poll(() => p2.locator('#s-chat-token-state').textContent()).toMatch(/^Set on /);
    await p2.locator('#s-chat-token-value').fill(`${TOKEN}-2`);
    await p2.locator('#s-chat-token').getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => p2.locator('#s-chat-token-done').textContent()).toBe('Saved');
    const box = await p2.locator('#s-chat-token-value').boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(44);
    await p2.locator('#s-webhook-secret').scrollIntoViewIfNeeded();
    await rig.shot(p2, 'console-secrets-en-phone', { fullPage: true });
    expect(rig.problems).toEqual([]);
    await context.close();
    await phone.close();

    // Restarted with a key that did not write them: the start stops with one config line, no stack trace.
    await stopServer(rig.server);
    const wrong = await startServer({
      databaseUrl: '',
      env: { DATA_DIR: rig.dataDir, MAP_TILE_URL: 'none', SECRETS_KEY: 'ab'.repeat(32) },
      timeoutMs: 240_000,
    }).then(
      () => 'started',
      (err: Error) => err.message,
    );
    expect(wrong).toMatch(
      /^server exited during start:\n[\s\S]*config: 1 chat channel token \(merchant_channel_settings\.chat_token\) values are encrypted under key version [0-9a-f]{8}, which is neither SECRETS_KEY/,
    );
    expect(wrong).not.toMatch(/\n\s+at /);
  }, 480_000);
});
