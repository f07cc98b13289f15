import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, freshDatabase, TEST_SECRETS_KEY, type Session, type TestApp } from '../helpers.js';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { SECRET_COLUMNS } from '../../src/modules/index.js';
import { createPgliteDatabase, type Database } from '../../src/platform/db/index.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { loadOrCreateSecret, SECRETS_KEY_KIND } from '../../src/platform/secret-file.js';
import { prepareStoredSecrets, reencryptStoredSecrets } from '../../src/platform/secret-store.js';
import { decryptSecret, encryptSecret, keyIdOf, keyring, keyVersionOf, parseSecretsKey, SecretError } from '../../src/platform/secrets.js';
import { seedDemo } from '../../src/seed.js';
import { verifySignature } from '../../src/platform/signature.js';

const A = Buffer.from(TEST_SECRETS_KEY, 'hex');
const B = Buffer.from('b'.repeat(64), 'hex');
const B_TEXT = B.toString('base64');

describe('AES-256-GCM values', () => {
  const ring = keyring(A);
  it('encrypts with a random IV, carries the key version, and decrypts only in its own row', () => {
    const one = encryptSecret(ring, 'tok', 'webhook_subscription:o:1');
    const two = encryptSecret(ring, 'tok', 'webhook_subscription:o:1');
    expect(one).not.toBe(two);
    expect(keyVersionOf(one)).toBe(keyIdOf(A));
    expect(one).not.toContain('tok');
    expect(decryptSecret(ring, one, 'webhook_subscription:o:1')).toBe('tok');
    // Moved to another row, damaged, or under a key not configured: a SecretError saying which.
    const reason = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as SecretError).reason;
      }
      return null;
    };
    expect(reason(() => decryptSecret(ring, one, 'webhook_subscription:o:2'))).toBe('UNDECRYPTABLE');
    expect(reason(() => decryptSecret(ring, `${one.slice(0, -4)}AAAA`, 'webhook_subscription:o:1'))).toBe('UNDECRYPTABLE');
    expect(reason(() => decryptSecret(keyring(B), one, 'webhook_subscription:o:1'))).toBe('UNKNOWN_KEY_VERSION');
    expect(() => decryptSecret(keyring(B), one, 'x')).toThrow(`key version ${keyIdOf(A)}`);
    expect(reason(() => decryptSecret(ring, 'enc:v1:abc', 'x'))).toBe('MALFORMED');
    // During a rotation both keys read; the new one writes.
    expect(decryptSecret(keyring(B, A), one, 'webhook_subscription:o:1')).toBe('tok');
    expect(keyVersionOf(encryptSecret(keyring(B, A), 'tok', 'c'))).toBe(keyIdOf(B));
  });

  it('reads the key as hex or base64; anything else is one config line that never shows the value', () => {
    expect(parseSecretsKey('SECRETS_KEY', TEST_SECRETS_KEY).equals(A)).toBe(true);
    expect(parseSecretsKey('SECRETS_KEY', B_TEXT).equals(B)).toBe(true);
    expect(parseSecretsKey('SECRETS_KEY', B.toString('base64url')).equals(B)).toBe(true);
    for (const bad of ['short-key-value', 'z'.repeat(64), Buffer.alloc(31).toString('base64')]) {
      expect(() => loadConfig({ SECRETS_KEY: bad })).toThrow(/^config: SECRETS_KEY must be a 32-byte key/);
      expect(() => loadConfig({ SECRETS_KEY: bad })).not.toThrow(bad);
    }
    expect(() => loadConfig({ SECRETS_KEY: TEST_SECRETS_KEY, SECRETS_KEY_PREVIOUS: 'nope' })).toThrow(
      /^config: SECRETS_KEY_PREVIOUS must be/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x/y', JWT_SECRET: 's'.repeat(40), SECRETS_KEY_PREVIOUS: B_TEXT })).toThrow(
      'config: SECRETS_KEY_PREVIOUS goes with SECRETS_KEY',
    );
    expect(loadConfig({}).secrets).toBeNull();
    expect(loadConfig({ SECRETS_KEY: B_TEXT, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY }).secrets).toMatchObject({
      current: { id: keyIdOf(B) },
      previous: { id: keyIdOf(A) },
    });
  });

  it('the embedded default keeps a generated key in DATA_DIR/secrets-key, mode 600, the same on every start', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'secrets-key-'));
    try {
      const all = await Promise.all(Array.from({ length: 4 }, () => loadOrCreateSecret(dir, SECRETS_KEY_KIND)));
      expect(new Set(all).size).toBe(1);
      expect(all[0]).toMatch(/^[0-9a-f]{64}$/);
      const file = path.join(dir, 'secrets-key');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await readFile(file, 'utf8')).trim()).toBe(all[0]);
      expect(await loadOrCreateSecret(dir, SECRETS_KEY_KIND)).toBe(all[0]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the start and the rotation, on the database', () => {
  let t: TestApp;
  let admin: Session;
  let server: http.Server;
  let base: string;
  const received: { raw: Buffer; headers: http.IncomingHttpHeaders }[] = [];
  const sys = <R = Record<string, any>>(text: string, params: unknown[] = []) =>
    t.db.withSystem(async (tx) => (await tx.query<R>(text, params)).rows);
  const CHOSEN = 'chosen-webhook-secret-0123456789';
  const TOKEN = 'EAAG-channel-token-for-rotation';
  let subId: string;
  let merchantId: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        // The trips' events only (a test event queued by another test may go out too).
        if (req.headers['x-webhook-event-type'] === 'trip.created') received.push({ raw: Buffer.concat(chunks), headers: req.headers });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await createTestApp({ raw: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    admin = await t.as('admin');
    const sub = await t.req(admin, {
      method: 'POST',
      url: '/webhooks/subscriptions',
      payload: { url: `${base}/hook`, event_types: ['trip.created'], secret: CHOSEN },
    });
    expect(sub.statusCode, sub.body).toBe(201);
    subId = sub.json().id;
    merchantId = (
      await t.req(await t.as('merchant'), { method: 'PATCH', url: '/merchant/channels', payload: { chat_token: TOKEN } })
    ).json().merchant_id;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((r) => server?.close(r));
  });

  /** The app a server would build on this database with these settings (its start-up check included). */
  async function start(raw: Record<string, string>, overrides: Partial<Config> = {}) {
    const app = await buildApp({
      config: loadConfig(
        { NODE_ENV: 'test', JWT_SECRET: 't'.repeat(40), WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...raw },
        overrides,
      ),
      db: t.db,
    });
    return app;
  }
  const startError = (raw: Record<string, string>) =>
    start(raw).then(
      async (app) => {
        await app.close();
        return null;
      },
      (err: Error) => err.message,
    );
  const stored = async () => {
    const [w] = await sys<{ secret: string }>('SELECT secret FROM webhook_subscription WHERE id = $1', [subId]);
    const [c] = await sys<{ chat_token: string }>('SELECT chat_token FROM merchant_channel_settings WHERE merchant_id = $1', [merchantId]);
    return { webhook: w.secret, chat: c.chat_token };
  };

  it('no response of the affected resources carries a secret, in its body or in its OpenAPI schema', async () => {
    const merchant = await t.as('merchant');
    const [row] = await sys<{ secret: string }>('SELECT secret FROM webhook_subscription WHERE id = $1', [subId]);
    const [chatRow] = await sys<{ chat_token: string }>('SELECT chat_token FROM merchant_channel_settings WHERE merchant_id = $1', [
      merchantId,
    ]);
    const forbidden = [CHOSEN, TOKEN, row.secret, chatRow.chat_token, 'enc:v1:'];
    const calls: [Session, string, string, unknown?][] = [
      [admin, 'GET', '/webhooks/subscriptions'],
      [admin, 'GET', `/webhooks/subscriptions/${subId}`],
      [admin, 'PATCH', `/webhooks/subscriptions/${subId}`, { description: 'renamed' }],
      [admin, 'POST', `/webhooks/subscriptions/${subId}/rotate-secret`, { overlap_seconds: 60, secret: CHOSEN }],
      [admin, 'POST', `/webhooks/subscriptions/${subId}/test`],
      [admin, 'GET', `/webhooks/subscriptions/${subId}/deliveries`],
      [merchant, 'GET', '/merchant/channels'],
      [merchant, 'PATCH', '/merchant/channels', { chat_token: TOKEN }],
      [admin, 'GET', `/admin/merchants/${merchantId}/channels`],
      [admin, 'PATCH', `/admin/merchants/${merchantId}/channels`, { chat_token: TOKEN, order_notifications: true }],
    ];
    for (const [session, method, url, payload] of calls) {
      const res = await t.req(session, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      for (const f of forbidden) expect(res.body, `${method} ${url}`).not.toContain(f);
      if (url.endsWith('/deliveries')) {
        for (const d of res.json().data as { id: string }[]) {
          const one = await t.req(admin, { method: 'GET', url: `/webhooks/deliveries/${d.id}` });
          for (const f of forbidden) expect(one.body).not.toContain(f);
        }
      }
    }
    // The schemas: no response of these operations has a secret property, except the `secret` a server-generated
    // webhook secret is shown in once (creation and rotation without a chosen secret); the request's secrets are writeOnly.
    const doc = (await t.req(null, { method: 'GET', url: '/openapi.json' })).json();
    const resolve = (s: any): any => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()]) : s);
    const props = (s: any, out = new Set<string>()): Set<string> => {
      s = resolve(s);
      if (!s || typeof s !== 'object') return out;
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        out.add(k);
        props(v, out);
      }
      for (const k of ['items', 'additionalProperties']) if (s[k]) props(s[k], out);
      for (const k of ['allOf', 'anyOf', 'oneOf']) for (const x of s[k] ?? []) props(x, out);
      return out;
    };
    let checked = 0;
    for (const [route, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      if (!route.includes('/webhooks/') && !route.endsWith('/channels')) continue;
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses ?? {}) as [string, any][]) {
          const names = props(r.content?.['application/json']?.schema);
          const allowed =
            ['createWebhookSubscription', 'rotateWebhookSecret'].includes(op.operationId) && status.startsWith('2') ? ['secret'] : [];
          const leaking = [...names].filter(
            (n) => /secret|token/.test(n) && !allowed.includes(n) && !/_set(_at)?$|_configured$|expires_at$|^chat_secret_ref$/.test(n),
          );
          expect(leaking, `${method.toUpperCase()} ${route} ${status}`).toEqual([]);
          checked++;
        }
        const body = resolve(op.requestBody?.content?.['application/json']?.schema);
        for (const name of ['secret', 'chat_token']) {
          const p = resolve(body?.properties?.[name]);
          if (p) expect(JSON.stringify(p), `${op.operationId} ${name}`).toContain('"writeOnly":true');
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('encrypts the plain-text webhook secrets of an older version at the first start; they still sign', async () => {
    // What an older version left: the secret in plain text.
    await sys('UPDATE webhook_subscription SET secret = $2 WHERE id = $1', [subId, 'whsec_legacy-plain-secret-value']);
    const app = await start({ SECRETS_KEY: TEST_SECRETS_KEY });
    try {
      const { webhook } = await stored();
      expect(webhook).toMatch(new RegExp(`^enc:v1:${keyIdOf(A)}:`));
      expect(webhook).not.toContain('legacy-plain-secret-value');
      // The new instance signs with it.
      received.length = 0;
      const trip = await t.req(admin, {
        method: 'POST',
        url: '/trips',
        payload: {
          pickup_location: { type: 'Point', coordinates: [-68.13, -16.5] },
          pickup_address: 'P',
          dropoff_location: { type: 'Point', coordinates: [-68.12, -16.49] },
          dropoff_address: 'D',
        },
      });
      expect(trip.statusCode, trip.body).toBe(201);
      await app.services.webhooks.newWorker({ now: () => new Date(Date.now() + 60_000) }).runOnce();
      expect(received).toHaveLength(1);
      verifySignature(
        'whsec_legacy-plain-secret-value',
        received[0].raw,
        received[0].headers['x-signature'],
        Number(received[0].headers['x-webhook-timestamp']),
      );
    } finally {
      await app.close();
    }
    // Put the chosen secret back for the next steps (as the API does: a rotation without overlap).
    expect(
      (
        await t.req(admin, {
          method: 'POST',
          url: `/webhooks/subscriptions/${subId}/rotate-secret`,
          payload: { overlap_seconds: 0, secret: CHOSEN },
        })
      ).statusCode,
    ).toBe(200);
  });

  it('refuses to start, in one config line, without a key, with a key that wrote none of them, or one that fails GCM authentication', async () => {
    expect(await startError({ SECRETS_KEY: '' })).toMatch(/^config: SECRETS_KEY is required: the database holds \d+ chat channel token/);
    expect(await startError({ SECRETS_KEY: B_TEXT })).toBe(
      `config: 1 chat channel token (merchant_channel_settings.chat_token) values are encrypted under key version ${keyIdOf(A)}, which is neither SECRETS_KEY (${keyIdOf(B)}) nor SECRETS_KEY_PREVIOUS; configure the key they were written with`,
    );
    const { webhook } = await stored();
    try {
      await sys('UPDATE webhook_subscription SET secret = $2 WHERE id = $1', [subId, `${webhook.slice(0, -6)}AAAAAA`]);
      expect(await startError({ SECRETS_KEY: TEST_SECRETS_KEY })).toMatch(
        /^config: the key of version \w+ does not decrypt the stored webhook signing secret .*GCM authentication failed/,
      );
    } finally {
      await sys('UPDATE webhook_subscription SET secret = $2 WHERE id = $1', [subId, webhook]);
    }
    expect(await startError({ SECRETS_KEY: TEST_SECRETS_KEY })).toBeNull();
  });

  it('rotation: both keys read while every value is re-encrypted under the new one, idempotently; then the old key alone is refused', async () => {
    const ring = keyring(B, A);
    const before = await stored();
    // Instances with SECRETS_KEY=new, SECRETS_KEY_PREVIOUS=old start (PostgreSQL: nothing rewritten at start) and read the old values.
    await prepareStoredSecrets(t.db, ring, SECRET_COLUMNS, { reencryptPrevious: false });
    expect(await stored()).toEqual(before);
    expect(decryptSecret(ring, before.webhook, `webhook_subscription:${t.demo.organizationId}:${subId}`)).toBe(CHOSEN);
    const app = await start({ SECRETS_KEY: B_TEXT, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY }, { databaseUrl: 'postgres://unused' });
    try {
      received.length = 0;
      const trip = await t.req(admin, {
        method: 'POST',
        url: '/trips',
        payload: {
          pickup_location: { type: 'Point', coordinates: [-68.13, -16.5] },
          pickup_address: 'P',
          dropoff_location: { type: 'Point', coordinates: [-68.12, -16.49] },
          dropoff_address: 'D',
        },
      });
      expect(trip.statusCode).toBe(201);
      expect(await stored()).toEqual(before);
      await app.services.webhooks.newWorker({ now: () => new Date(Date.now() + 60_000) }).runOnce();
      expect(received).toHaveLength(1);
      verifySignature(CHOSEN, received[0].raw, received[0].headers['x-signature'], Number(received[0].headers['x-webhook-timestamp']));
    } finally {
      await app.close();
    }
    // `npm run secrets:rotate`'s work.
    const first = await reencryptStoredSecrets(t.db, ring, SECRET_COLUMNS, { plainOnly: false });
    expect(first.reencrypted).toBeGreaterThanOrEqual(2);
    expect(first.unreadable).toEqual([]);
    const after = await stored();
    for (const v of Object.values(after)) expect(keyVersionOf(v)).toBe(keyIdOf(B));
    expect(decryptSecret(keyring(B), after.chat, `merchant_channel_settings:${t.demo.organizationId}:${merchantId}`)).toBe(TOKEN);
    expect(await reencryptStoredSecrets(t.db, ring, SECRET_COLUMNS, { plainOnly: false })).toEqual({
      reencrypted: 0,
      raced: 0,
      unreadable: [],
    });
    // The new key alone now starts; the old one alone is refused.
    expect(await startError({ SECRETS_KEY: B_TEXT })).toBeNull();
    expect(await startError({ SECRETS_KEY: TEST_SECRETS_KEY })).toMatch(/^config: .* key version \w+, which is neither SECRETS_KEY/);
    // The embedded database (one process) re-encrypts at its start: back under A with SECRETS_KEY=A, SECRETS_KEY_PREVIOUS=B.
    const back = await start({ SECRETS_KEY: TEST_SECRETS_KEY, SECRETS_KEY_PREVIOUS: B_TEXT });
    await back.close();
    for (const v of Object.values(await stored())) expect(keyVersionOf(v)).toBe(keyIdOf(A));
  });
});

describe('npm run secrets:rotate', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanup) await c();
  });
  function rotateCli(env: Record<string, string>) {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(JWT_SECRET|SECRETS_KEY|DATABASE_|DATA_DIR)/.test(k)));
    return spawnSync(process.execPath, ['--import', 'tsx', 'src/secrets-cli.ts'], {
      env: { ...clean, NODE_ENV: 'production', ...env },
      encoding: 'utf8',
      timeout: 120_000,
    });
  }

  it('re-encrypts every stored secret under the current key with the database settings and the keys alone; idempotent', async () => {
    let db: Database;
    let env: Record<string, string>;
    if (process.env.TEST_DATABASE_URL) {
      const fresh = await freshDatabase();
      cleanup.push(fresh.drop);
      db = fresh.db;
      env = { DATABASE_URL: fresh.url! };
    } else {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'secrets-cli-'));
      cleanup.push(() => rm(dir, { recursive: true, force: true }));
      db = await createPgliteDatabase(path.join(dir, 'pglite'));
      env = { DATA_DIR: dir };
    }
    await migrate(db);
    const app = await buildApp({
      config: loadConfig({
        NODE_ENV: 'test',
        JWT_SECRET: 't'.repeat(40),
        SECRETS_KEY: TEST_SECRETS_KEY,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      }),
      db,
    });
    const demo = (await seedDemo(app))!;
    const login = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'admin@demo.test', password: demo.password },
    });
    const token = login.json().access_token;
    const sub = await app.inject({
      method: 'POST',
      url: '/api/v1/webhooks/subscriptions',
      headers: { authorization: `Bearer ${token}` },
      payload: { url: 'http://127.0.0.1:9/x', event_types: ['*'], secret: 'cli-rotated-secret-0123456789' },
    });
    expect(sub.statusCode, sub.body).toBe(201);
    await app.close();
    await db.close();

    const noPrevious = rotateCli({ ...env, SECRETS_KEY: B_TEXT });
    expect(noPrevious.status).toBe(1);
    expect(noPrevious.stderr.trim()).toMatch(
      new RegExp(
        `^secrets: 0 values re-encrypted under key version ${keyIdOf(B)}; left unreadable: 1 webhook signing secret .*key version ${keyIdOf(A)}`,
      ),
    );
    const first = rotateCli({ ...env, SECRETS_KEY: B_TEXT, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY });
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe(`secrets: 1 values re-encrypted under key version ${keyIdOf(B)}; every stored secret is under it`);
    const again = rotateCli({ ...env, SECRETS_KEY: B_TEXT, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY });
    expect(again.stdout.trim()).toBe(`secrets: 0 values re-encrypted under key version ${keyIdOf(B)}; every stored secret is under it`);
    if (!process.env.TEST_DATABASE_URL) {
      const check = await createPgliteDatabase(path.join(env.DATA_DIR, 'pglite'));
      const { rows } = await check.withSystem((tx) => tx.query<{ secret: string }>('SELECT secret FROM webhook_subscription'));
      expect(keyVersionOf(rows[0].secret)).toBe(keyIdOf(B));
      await check.close();
    }
  }, 240_000);
});

describe('without a key (PostgreSQL before SECRETS_KEY is set)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ raw: { SECRETS_KEY: '', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('starts while nothing is stored, and refuses to store a secret with 503 SECRETS_KEY_MISSING, writing nothing', async () => {
    expect(t.config.secrets).toBeNull();
    const merchant = await t.as('merchant');
    const chat = await t.req(merchant, {
      method: 'PATCH',
      url: '/merchant/channels',
      payload: { chat_token: 'EAAG-no-key-token', chat_phone: '59170000099' },
    });
    expect(chat.statusCode).toBe(503);
    expect(chat.json().code).toBe('SECRETS_KEY_MISSING');
    const hook = await t.req(await t.as('admin'), {
      method: 'POST',
      url: '/webhooks/subscriptions',
      payload: { url: 'http://127.0.0.1:9/x', event_types: ['*'] },
    });
    expect(hook.statusCode).toBe(503);
    expect(hook.json().code).toBe('SECRETS_KEY_MISSING');
    const rows = await t.db.withSystem(async (tx) => [
      ...(await tx.query('SELECT 1 FROM merchant_channel_settings')).rows,
      ...(await tx.query('SELECT 1 FROM webhook_subscription')).rows,
    ]);
    expect(rows).toEqual([]);
  });
});
