import http from 'node:http';
import { percentile, sseFrames, type BenchEnv } from './lib.js';

/**
 * Exception latency: from the moment a driver's GPS fix is sent (POST /drivers/{id}/location, far from his trip, so the
 * recomputed ETA passes the promise plus the grace) to the moment `trip.delayed` for that trip reaches a dispatcher's
 * organization stream. One trip at a time on the demo driver: created with a promise a few minutes ahead, assigned,
 * the late fix posted, the event awaited, the trip cancelled and the driver put back beside the store.
 */
export default async function exceptionsBench(env: BenchEnv) {
  const SAMPLES = env.quick ? 10 : 40;
  const admin = await env.login('admin@demo.test');
  const dispatch = await env.login('dispatch@demo.test');
  const { rows } = await env.pool.query("SELECT d.id FROM driver d JOIN users u ON u.id = d.user_id WHERE u.email = 'driver@demo.test'");
  const driverId = rows[0].id as string;
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${env.baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await r.json().catch(() => null)) as Record<string, unknown> | null;
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json!;
  };
  const pt = (lon: number, lat: number) => ({ type: 'Point', coordinates: [lon, lat] });
  await api('POST', `/drivers/${driverId}/availability`, { available: true });
  await api('POST', `/drivers/${driverId}/location`, { location: pt(-68.13, -16.5), recorded_at: new Date().toISOString() });

  // The dispatcher's organization stream: trip.delayed receipts by trip id.
  const arrived = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const stream = await new Promise<http.ClientRequest>((resolve, reject) => {
    const req = http.get(
      `${env.baseUrl}/api/v1/realtime/organization/stream`,
      { agent: false, headers: { authorization: `Bearer ${dispatch}`, accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
        sseFrames(res, ({ type, text }, now) => {
          if (type !== 'trip.delayed') return;
          const tripId = /"trip_id":"([^"]+)"/.exec(text)?.[1];
          if (!tripId || arrived.has(tripId)) return;
          arrived.set(tripId, now);
          waiting.get(tripId)?.();
        });
        resolve(req);
      },
    );
    req.on('error', reject);
  });

  const latencies: number[] = [];
  let missed = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const trip = await api('POST', '/trips', {
      pickup_location: pt(-68.133, -16.499),
      pickup_address: 'Av. 16 de Julio 1490',
      dropoff_location: pt(-68.125, -16.505),
      dropoff_address: `Calle Bench ${i}`,
      promised_at: new Date(Date.now() + 4 * 60_000).toISOString(),
    });
    const id = trip.id as string;
    await api('POST', `/trips/${id}/assign`, { driver_id: driverId });
    const got = new Promise<void>((resolve) => waiting.set(id, resolve));
    const sent = performance.now();
    // About 45 km away at the learned or set speed: far past the promise plus the grace.
    await api('POST', `/drivers/${driverId}/location`, { location: pt(-68.5, -16.6), recorded_at: new Date().toISOString() });
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 10_000).unref());
    if ((await Promise.race([got, timeout])) === 'timeout') missed++;
    else latencies.push(arrived.get(id)! - sent);
    waiting.delete(id);
    await api('POST', `/trips/${id}/status`, { status: 'cancelled', reason: 'bench' });
    await api('POST', `/drivers/${driverId}/location`, { location: pt(-68.13, -16.5), recorded_at: new Date().toISOString() });
  }
  stream.destroy();
  latencies.sort((a, b) => a - b);
  const note = `${latencies.length}/${SAMPLES} trips, one GPS fix each, one dispatcher on the organization stream`;
  env.report({
    scenario: 'exceptions',
    metric: 'GPS fix → trip.delayed on the stream p50',
    value: percentile(latencies, 0.5),
    unit: 'ms',
    note,
  });
  env.report({
    scenario: 'exceptions',
    metric: 'GPS fix → trip.delayed on the stream p90',
    value: percentile(latencies, 0.9),
    unit: 'ms',
    note: 'includes the fix request',
  });
  env.report({ scenario: 'exceptions', metric: 'GPS fix → trip.delayed on the stream max', value: latencies.at(-1) ?? 0, unit: 'ms' });
  env.report({ scenario: 'exceptions', metric: 'trip.delayed never received', value: missed, note: 'waited 10 s each' });
}
