import http from 'node:http';
import type { BenchEnv } from './lib.js';

/**
 * Soak: a mixed workload for a bounded time (`--soak-seconds=N`, default 60), paced
 * (each virtual user waits between its requests) so that it measures a sustainable rate, not a saturation
 * run; `--soak-scale=K` multiplies every user count. Drivers post GPS batches, customers order, the
 * merchant moves orders to confirmed → preparing → ready (ready creates the trip), dispatch reads GET
 * /trips and GET /admin/dispatch, and SSE subscribers hold /realtime/organization/stream and count the
 * events they receive. Reported per route: requests/s, p50, p99, 4xx and 5xx (and network errors).
 */
export default async function soakBench(env: BenchEnv) {
  const args = process.argv.slice(2);
  const seconds = Number(args.find((a) => a.startsWith('--soak-seconds='))?.slice(15) ?? (env.quick ? 10 : 60));
  const scale = Number(args.find((a) => a.startsWith('--soak-scale='))?.slice(13) ?? 1);
  const DRIVERS = Math.round(20 * scale);
  const CUSTOMERS = Math.round(4 * scale);
  const READERS = Math.round(4 * scale);
  const SSE = process.env.BENCH_SSE_CONNECTIONS ? Number(process.env.BENCH_SSE_CONNECTIONS) : Math.round(300 * scale);

  // ------------------------------------------------------------------ setup: one driver row per simulated device
  const { rows: orgRows } = await env.pool.query("SELECT organization_id, password_hash FROM users WHERE email = 'driver@demo.test'");
  const { organization_id: org, password_hash: hash } = orgRows[0];
  const tag = Date.now().toString(36);
  const emails = Array.from({ length: DRIVERS }, (_, i) => `soak-${tag}-${i}@demo.test`);
  await env.pool.query(
    `WITH u AS (INSERT INTO users (organization_id, id, email, password_hash, display_name, role)
                SELECT $1, gen_random_uuid()::text, e, $3, 'soak driver', 'repartidor' FROM unnest($2::text[]) e RETURNING id)
     INSERT INTO driver (organization_id, id, user_id, status, available) SELECT $1, gen_random_uuid()::text, id, 'approved', true FROM u`,
    [org, emails, hash],
  );
  const driverTokens = await Promise.all(emails.map((e) => env.login(e)));
  const [customer, merchant, dispatch] = await Promise.all(['customer', 'merchant', 'dispatch'].map((r) => env.login(`${r}@demo.test`)));

  const stats = new Map<string, { lat: number[]; ok: number; c4: number; c5: number; net: number }>();
  const stat = (route: string) => {
    let s = stats.get(route);
    if (!s) stats.set(route, (s = { lat: [], ok: 0, c4: 0, c5: 0, net: 0 }));
    return s;
  };
  async function call(route: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
    const s = stat(route);
    const t0 = performance.now();
    try {
      const r = await fetch(`${env.baseUrl}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await r.text();
      s.lat.push(performance.now() - t0);
      if (r.status >= 500) s.c5++;
      else if (r.status >= 400) s.c4++;
      else s.ok++;
      return r.ok ? JSON.parse(text) : null;
    } catch {
      s.net++;
      return null;
    }
  }

  const market = await call('setup', customer, 'GET', '/customer/marketplace?limit=20');
  const shop = market.data.find((m: { items: unknown[]; branches: unknown[] }) => m.items.length > 0 && m.branches.length > 0);
  const address = (await call('setup', customer, 'GET', '/customer/addresses')).data[0];
  stats.delete('setup');

  // ------------------------------------------------------------------ SSE subscribers
  let sseEvents = 0;
  let sseErrors = 0;
  let sseOpen = 0;
  const streams: http.ClientRequest[] = [];
  const openStream = () =>
    new Promise<void>((resolve) => {
      const req = http.get(
        `${env.baseUrl}/api/v1/realtime/organization/stream`,
        { agent: false, headers: { authorization: `Bearer ${dispatch}`, accept: 'text/event-stream' } },
        (res) => {
          if (res.statusCode !== 200) {
            sseErrors++;
            res.resume();
            return resolve();
          }
          sseOpen++;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            sseEvents += chunk.split('\nevent: ').length - 1 + (chunk.startsWith('event: ') ? 1 : 0);
          });
          res.on('error', () => undefined);
          resolve();
        },
      );
      req.on('error', () => {
        if (!stopping) sseErrors++;
        resolve();
      });
      streams.push(req);
    });
  let stopping = false;
  const sseT0 = performance.now();
  for (let i = 0; i < SSE; i += 50) await Promise.all(Array.from({ length: Math.min(50, SSE - i) }, openStream));
  const sseOpenMs = performance.now() - sseT0;

  // ------------------------------------------------------------------ paced virtual users
  const until = Date.now() + seconds * 1000;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const paced = async (periodMs: number, body: (n: number) => Promise<void>) => {
    await sleep(Math.random() * periodMs); // spread the starts
    for (let n = 0; Date.now() < until; n++) {
      const t0 = Date.now();
      await body(n);
      await sleep(Math.max(0, periodMs - (Date.now() - t0)));
    }
  };
  const statusQueue: { id: string; status: string }[] = [];
  const NEXT: Record<string, string> = { pending_confirmation: 'confirmed', confirmed: 'preparing', preparing: 'ready' };
  let points = 0;
  const users: Promise<void>[] = [];
  // Drivers: a batch of 10 points every second each.
  driverTokens.forEach((token, d) =>
    users.push(
      paced(1000, async (n) => {
        const now = Date.now();
        const r = await call('POST /driver/locations/batch', token, 'POST', '/driver/locations/batch', {
          points: Array.from({ length: 10 }, (_, i) => ({
            client_point_id: `s${tag}-${d}-${n}-${i}`,
            location: { type: 'Point', coordinates: [-68.13 + i * 1e-5, -16.5 + d * 1e-4] },
            recorded_at: new Date(now - (10 - i) * 100).toISOString(),
          })),
        });
        if (r) points += r.accepted;
      }),
    ),
  );
  // Customers: an order every 500 ms each.
  for (let c = 0; c < CUSTOMERS; c++)
    users.push(
      paced(500, async (n) => {
        const o = await call('POST /customer/orders', customer, 'POST', '/customer/orders', {
          branch_id: shop.branches[0].id,
          address_id: address.id,
          items: [{ catalog_item_id: shop.items[n % shop.items.length].id, quantity: 1 + (n % 2) }],
          payment_destination: 'cash',
        });
        if (o) statusQueue.push({ id: o.id, status: o.status });
      }),
    );
  // The merchant: two workers moving orders along, as fast as orders arrive (20 ms idle poll).
  for (let m = 0; m < 2; m++)
    users.push(
      paced(20, async () => {
        const o = statusQueue.shift();
        if (!o || !NEXT[o.status]) return;
        const r = await call('PATCH /merchant/orders/:id/status', merchant, 'PATCH', `/merchant/orders/${o.id}/status`, {
          status: NEXT[o.status],
        });
        if (r) statusQueue.push({ id: o.id, status: r.status });
      }),
    );
  // Dispatch: readers alternating the trip list and the dispatch board, every 100 ms each.
  for (let k = 0; k < READERS; k++)
    users.push(
      paced(100, async (n) => {
        if (n % 2) await call('GET /admin/dispatch', dispatch, 'GET', '/admin/dispatch');
        else await call('GET /trips?limit=50', dispatch, 'GET', '/trips?limit=50');
      }),
    );
  // The merchant's order list, four times a second.
  users.push(paced(250, async () => void (await call('GET /merchant/orders', merchant, 'GET', '/merchant/orders?limit=20'))));

  const t0 = performance.now();
  await Promise.all(users);
  const elapsed = (performance.now() - t0) / 1000;
  stopping = true;
  for (const s of streams) s.destroy();

  // ------------------------------------------------------------------ report
  const pct = (a: number[], p: number) => {
    if (a.length === 0) return NaN;
    const s = [...a].sort((x, y) => x - y);
    return s[Math.min(s.length - 1, Math.floor(s.length * p))];
  };
  let total = 0;
  let total5 = 0;
  const note = `${seconds} s, scale ${scale}`;
  for (const [route, s] of [...stats].sort()) {
    const n = s.lat.length + s.net;
    total += n;
    total5 += s.c5;
    const isRead = route.startsWith('GET');
    env.report({
      scenario: 'soak',
      metric: `${route} p99`,
      value: pct(s.lat, 0.99),
      unit: 'ms',
      note: `${(n / elapsed).toFixed(1)} rps, p50 ${pct(s.lat, 0.5).toFixed(1)} ms, 4xx ${s.c4}, 5xx ${s.c5}, net ${s.net}${isRead ? ', target p99 < 100' : ''}`,
    });
  }
  env.report({ scenario: 'soak', metric: 'total requests/s', value: total / elapsed, note });
  env.report({ scenario: 'soak', metric: 'total 5xx', value: total5, note: 'target 0' });
  env.report({ scenario: 'soak', metric: 'GPS points accepted/s', value: points / elapsed });
  env.report({
    scenario: 'soak',
    metric: 'SSE connections open',
    value: sseOpen,
    note: `of ${SSE}, opened in ${Math.round(sseOpenMs)} ms, ${sseErrors} errors`,
  });
  env.report({
    scenario: 'soak',
    metric: 'SSE events received',
    value: sseEvents,
    note: `${(sseEvents / Math.max(sseOpen, 1)).toFixed(1)} per connection`,
  });
}
