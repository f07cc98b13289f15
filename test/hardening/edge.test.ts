import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { SseClient } from '../realtime/sse.js';

/**
 * The HTTP edge: our own header/request timeouts answer 408, oversized
 * headers 431, both problem+json like every framework error; CORS preflights allow every method and
 * header the API uses from the configured origins; the docs page has a Content-Security-Policy.
 */
let t: TestApp;
let port = 0;
let admin: Session;
const ORIGIN = 'https://console.example.test';

beforeAll(async () => {
  t = await createTestApp({
    corsOrigins: [ORIGIN],
    bodyLimitBytes: 4096,
    raw: {
      HTTP_HEADERS_TIMEOUT_MS: '600',
      HTTP_REQUEST_TIMEOUT_MS: '1500',
      HTTP_TIMEOUT_CHECK_MS: '100',
      HTTP_MAX_HEADER_BYTES: '8192',
      REALTIME_HEARTBEAT_MS: '300',
    },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
  admin = await t.as('admin');
});
afterAll(async () => {
  await t?.close();
});

/**
 * A raw socket: writes `head`, then `drip` chunks every `everyMs`; resolves with what the server sent and how many
 * chunks had been written when it closed the connection.
 */
function rawRequest(head: string, drip: string[] = [], everyMs = 200): Promise<{ text: string; sent: number }> {
  return new Promise((resolve, reject) => {
    let i = 0;
    const sock = net.connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearInterval(timer);
      resolve({ text, sent: i });
    });
    sock.on('connect', () => {
      sock.write(head);
      timer = setInterval(() => {
        if (i < drip.length && !sock.destroyed) sock.write(drip[i++]);
      }, everyMs);
    });
    setTimeout(() => reject(new Error('server never closed the connection')), 15_000).unref();
  });
}
function parse(raw: string) {
  const [head, body] = raw.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body: body ? JSON.parse(body) : null };
}

describe('timeouts and oversized requests answer problem+json', () => {
  it('drops a client that sends its headers a byte at a time: 408 REQUEST_TIMEOUT within the headers timeout', async () => {
    const drip = Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: y\r\n`);
    const { text, sent } = await rawRequest('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n', drip, 150);
    const r = parse(text);
    expect(r.status).toBe(408);
    expect(r.head).toContain('content-type: application/problem+json');
    expect(r.body).toMatchObject({ status: 408, code: 'REQUEST_TIMEOUT' });
    // Cut off while still trickling: the headers timeout (600 ms) ends it, not the end of the headers (40 × 150 ms).
    expect(sent).toBeLessThan(drip.length);
  });

  it('drops a client trickling its body: 408 within the request timeout', async () => {
    const drip = Array.from({ length: 50 }, () => 'a');
    const { text, sent } = await rawRequest(
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n',
      drip,
      200,
    );
    const r = parse(text);
    expect(r.status).toBe(408);
    expect(r.body).toMatchObject({ code: 'REQUEST_TIMEOUT' });
    // Cut off while still trickling: the request timeout (1.5 s) ends it, not the end of the body (50 × 200 ms).
    expect(sent).toBeLessThan(drip.length);
  });

  it('answers 431 HEADERS_TOO_LARGE as problem+json', async () => {
    const { text } = await rawRequest(`GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(10_000)}\r\n\r\n`);
    const r = parse(text);
    expect(r.status).toBe(431);
    expect(r.head).toContain('content-type: application/problem+json');
    expect(r.body).toMatchObject({ status: 431, code: 'HEADERS_TOO_LARGE' });
  });

  it('keeps an SSE stream open beyond the request timeout (the request itself was complete)', async () => {
    const c = await SseClient.open(`http://127.0.0.1:${port}/api/v1/realtime/me/stream`, { authorization: `Bearer ${admin.token}` });
    expect(c.status).toBe(200);
    // Heartbeats every 300 ms: the seventh comes after the request timeout (1.5 s); `until` fails if the stream ends first.
    await c.until(() => c.comments.filter((x) => x === 'heartbeat').length >= 7, 15_000, 'heartbeats past the request timeout');
    expect(c.ended).toBe(false);
    c.close();
  });

  it('framework errors are problem+json with a stable code: 404 route, 413 body, 415 media type, 400 malformed JSON', async () => {
    const cases = [
      [{ method: 'GET', url: '/api/v1/no/such/route' }, 404, 'NOT_FOUND'],
      [
        {
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: JSON.stringify({ email: 'a'.repeat(5000), password: 'x' }),
          headers: { 'content-type': 'application/json' },
        },
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      [
        { method: 'POST', url: '/api/v1/auth/login', payload: 'email=a', headers: { 'content-type': 'text/csv' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        { method: 'POST', url: '/api/v1/auth/login', payload: '{"email":', headers: { 'content-type': 'application/json' } },
        400,
        'MALFORMED_JSON',
      ],
    ] as const;
    for (const [opts, status, code] of cases) {
      const res = await t.app.inject(opts as never);
      expect(res.statusCode, `${opts.method} ${opts.url}`).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status, code });
    }
  });
});

describe('CORS', () => {
  const preflight = (origin: string, method: string, headers: string) =>
    t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/customer/orders',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });

  it('allows every method and request header the API uses to a configured origin', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await preflight(ORIGIN, method, 'authorization,content-type,idempotency-key,last-event-id,if-none-match');
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(
        String(res.headers['access-control-allow-methods'])
          .split(',')
          .map((x) => x.trim()),
      ).toContain(method);
      const allowed = String(res.headers['access-control-allow-headers'])
        .toLowerCase()
        .split(',')
        .map((x) => x.trim());
      for (const h of ['authorization', 'content-type', 'idempotency-key', 'last-event-id', 'if-none-match']) expect(allowed).toContain(h);
      expect(res.headers['access-control-max-age']).toBe('600');
    }
  });

  it('gives an unlisted origin nothing, and exposes ETag, Location, Retry-After and the replay header to scripts', async () => {
    const other = await preflight('https://evil.example.test', 'DELETE', 'authorization');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const res = await t.req(admin, { method: 'GET', url: '/me', headers: { origin: ORIGIN } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    const exposed = String(res.headers['access-control-expose-headers'])
      .toLowerCase()
      .split(',')
      .map((x) => x.trim());
    for (const h of ['etag', 'location', 'retry-after', 'idempotent-replayed', 'x-request-id']) expect(exposed).toContain(h);
  });
});

describe('security headers', () => {
  it("every answer carries helmet's headers (no CSP on the API): a read, a 404, a 401, a validation error, the docs page", async () => {
    const expected = {
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-site',
      'origin-agent-cluster': '?1',
      'x-dns-prefetch-control': 'off',
      'x-download-options': 'noopen',
      'x-permitted-cross-domain-policies': 'none',
      'x-xss-protection': '0',
    };
    const answers = [
      [await t.req(admin, { method: 'GET', url: '/me' }), 200],
      [await t.app.inject({ method: 'GET', url: '/api/v1/no/such/route' }), 404],
      [await t.req(null, { method: 'GET', url: '/me' }), 401],
      [await t.req(admin, { method: 'GET', url: '/trips?limit=0' }), 400],
      [await t.app.inject({ method: 'GET', url: '/docs/' }), 200],
    ] as const;
    for (const [res, status] of answers) {
      expect(res.statusCode).toBe(status);
      expect(res.headers).toMatchObject(expected);
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });
});

describe('docs page', () => {
  it('has a Content-Security-Policy that still lets Swagger UI load (its scripts are all same-origin files)', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    const scripts = [...page.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, inline] of scripts) {
      expect(inline.trim()).toBe(''); // no inline script, which the policy would block
      const src = /src="([^"]+)"/.exec(attrs)![1];
      const url = src.startsWith('/') ? src : `/docs/static/${src.replace(/^\.\/(static\/)?/, '')}`;
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
    // The API's JSON answers carry no such policy (it is a page policy).
    expect((await t.req(null, { method: 'GET', url: '/health' })).headers['content-security-policy']).toBeUndefined();
  });
});
