import pg from 'pg';
import { cpuPerOp, cpuSample, formatCpu, load, openLoop, tenantCeiling, withCpu, type BenchEnv } from './lib.js';
import type { Prepared } from '../src/platform/db/index.js';
import { NEARBY, circleBox } from '../src/modules/logistics/repo/drivers.js';
import { listTripsStatement, type TripListFilter } from '../src/modules/logistics/repo/trips.js';

/**
 * Logistics: GPS ingest through POST /driver/locations/batch (100 points a request) against a raw
 * unnest insert of the same shape through the pool; GET /drivers/nearby over 10,000 drivers and GET
 * /trips over 100,000 trips: throughput at 20 connections against their database ceiling (the same
 * statement in the same tenant transaction through the service's data layer, no HTTP, same run), and
 * latency at an open-loop 300 req/s; EXPLAIN checks that the plans use the indexes.
 */
export default async function logisticsBench(env: BenchEnv) {
  const { rows: orgRows } = await env.pool.query("SELECT organization_id, password_hash FROM users WHERE email = 'driver@demo.test'");
  const { organization_id: org, password_hash: hash } = orgRows[0];
  const connections = 20;
  const duration = env.duration;

  // ---------------------------------------------------------------- GPS ingest
  // One driver per connection (the same demo password hash), so batches do not queue on one driver row.
  const tag = Date.now().toString(36);
  const emails: string[] = [];
  for (let i = 0; i < connections; i++) {
    const email = `bench-gps-${tag}-${i}@demo.test`;
    emails.push(email);
    await env.pool.query(
      `WITH u AS (INSERT INTO users (organization_id, id, email, password_hash, display_name, role) VALUES ($1, gen_random_uuid()::text, $2, $3, 'bench driver', 'repartidor') RETURNING id)
       INSERT INTO driver (organization_id, id, user_id, status, available) SELECT $1, gen_random_uuid()::text, id, 'approved', true FROM u`,
      [org, email, hash],
    );
  }
  const tokens = await Promise.all(emails.map((e) => env.login(e)));
  let seq = 0;
  const batch = () => {
    const now = Date.now();
    const points = [];
    for (let i = 0; i < 100; i++) {
      seq++;
      points.push({
        client_point_id: `b${tag}-${seq}`,
        location: { type: 'Point', coordinates: [-68.13 + (seq % 1000) * 1e-5, -16.5] },
        recorded_at: new Date(now - (100 - i) * 1000).toISOString(),
      });
    }
    return JSON.stringify({ points });
  };
  let client = 0;
  const api = await withCpu(env.serverPid, () =>
    load({
      url: `${env.baseUrl}/api/v1/driver/locations/batch`,
      method: 'POST',
      connections,
      duration,
      headers: { 'content-type': 'application/json' },
      setupClient: (c: any) =>
        c.setHeaders({ 'content-type': 'application/json', authorization: `Bearer ${tokens[client++ % tokens.length]}` }),
      requests: [{ method: 'POST', setupRequest: (req: any) => ({ ...req, body: batch() }) }],
    } as any),
  );
  const apiPps = api.rps * 100;

  const { rows: drvRows } = await env.pool.query('SELECT id FROM driver WHERE organization_id = $1 ORDER BY id LIMIT $2', [
    org,
    connections,
  ]);
  let rawPoints = 0;
  let rawSeq = 0;
  const rawCpu0 = await cpuSample(env.serverPid);
  const until = Date.now() + duration * 1000;
  await Promise.all(
    drvRows.map(async ({ id }: { id: string }) => {
      while (Date.now() < until) {
        const ids: string[] = [];
        const lons: number[] = [];
        const lats: number[] = [];
        const ats: string[] = [];
        for (let i = 0; i < 100; i++) {
          ids.push(`raw${tag}-${rawSeq++}`);
          lons.push(-68.13);
          lats.push(-16.5);
          ats.push(new Date().toISOString());
        }
        await env.pool.query(
          `INSERT INTO driver_location (organization_id, driver_id, client_point_id, location, recorded_at)
           SELECT $1, $2, u.id, point(u.lon, u.lat), u.at FROM unnest($3::text[], $4::float8[], $5::float8[], $6::timestamptz[]) AS u(id, lon, lat, at)
           ON CONFLICT DO NOTHING`,
          [org, id, ids, lons, lats, ats],
        );
        rawPoints += 100;
      }
    }),
  );
  const rawCpu = cpuPerOp(rawCpu0, await cpuSample(env.serverPid), rawPoints / 100);
  const rawPps = rawPoints / duration;
  env.report({
    scenario: 'logistics',
    metric: 'GPS ingest via API (points/s)',
    value: apiPps,
    note: `p99 ${api.p99} ms/request, non2xx ${api.non2xx}, errors ${api.errors}; ${formatCpu(api.cpu, 'batch of 100')}`,
  });
  env.report({ scenario: 'logistics', metric: 'GPS raw unnest insert (points/s)', value: rawPps, note: formatCpu(rawCpu, 'batch of 100') });
  env.report({ scenario: 'logistics', metric: 'GPS API ÷ raw insert', value: apiPps / rawPps, unit: 'ratio', note: 'target ≥ 0.5' });

  // ---------------------------------------------------------------- nearby over 10,000 drivers
  const nDrivers = 10_000;
  await env.pool.query(
    `WITH u AS (
       INSERT INTO users (organization_id, id, email, password_hash, display_name, role)
       SELECT $1, gen_random_uuid()::text, 'bench-near-' || $2 || '-' || g || '@demo.test', 'x', 'near driver', 'repartidor' FROM generate_series(1, $3) g
       RETURNING id)
     INSERT INTO driver (organization_id, id, user_id, status, available, last_location, last_location_at, last_seen_at)
     SELECT $1, gen_random_uuid()::text, id, 'approved', random() < 0.8, point(-68.13 + (random() - 0.5) * 0.3, -16.5 + (random() - 0.5) * 0.3), now(), now() FROM u`,
    [org, tag, nDrivers],
  );
  await env.pool.query('ANALYZE driver; ANALYZE users; ANALYZE driver_territory');
  const admin = await env.login('admin@demo.test');
  const { rows: adminRows } = await env.pool.query("SELECT id FROM users WHERE email = 'admin@demo.test'");
  const ctx = { organizationId: org as string, userId: adminRows[0].id as string };
  const OPEN_RATE = 300;
  /**
   * Closed-loop throughput against the ceiling of its statement (the same prepared statement in the same exchange as
   * the route sends it: `readTenant`, one round trip), and for reference against the transaction a read used before
   * (`withTenant`: BEGIN + settings + statement, COMMIT); then the open-loop latency.
   */
  const route = async (label: string, path: string, sql: Prepared, params: unknown[]) => {
    const headers = { authorization: `Bearer ${admin}` };
    const ceiling = await withCpu(env.serverPid, () => tenantCeiling(env, ctx, sql, params, 'read'));
    const txCeiling = await tenantCeiling(env, ctx, sql.text, params, 'tx');
    const closed = await withCpu(env.serverPid, () => load({ url: `${env.baseUrl}${path}`, headers, duration, connections }));
    const open = await openLoop({ url: `${env.baseUrl}${path}`, headers, rate: OPEN_RATE, seconds: duration });
    env.report({
      scenario: 'logistics',
      metric: `${label} tenant exchange, no HTTP (qps)`,
      value: ceiling.rps,
      note: `p99 ${ceiling.p99.toFixed(1)} ms; the route's exchange (readTenant, prepared), data layer, 20 workers; ${formatCpu(ceiling.cpu, 'exchange')}`,
    });
    env.report({
      scenario: 'logistics',
      metric: `${label} tenant transaction, no HTTP (qps)`,
      value: txCeiling.rps,
      note: `p99 ${txCeiling.p99.toFixed(1)} ms; BEGIN+settings+statement (unprepared), COMMIT: reference`,
    });
    env.report({
      scenario: 'logistics',
      metric: `${label} rps (20 connections)`,
      value: closed.rps,
      note: `p50 ${closed.p50} ms, p99 ${closed.p99} ms, non2xx ${closed.non2xx}; ${formatCpu(closed.cpu)}`,
    });
    env.report({
      scenario: 'logistics',
      metric: `${label} ÷ tenant exchange`,
      value: closed.rps / ceiling.rps,
      unit: 'ratio',
      note: 'target ≥ 0.5',
    });
    env.report({
      scenario: 'logistics',
      metric: `${label} ÷ tenant transaction`,
      value: closed.rps / txCeiling.rps,
      unit: 'ratio',
      note: 'reference',
    });
    env.report({
      scenario: 'logistics',
      metric: `${label} open loop ${OPEN_RATE}/s p99`,
      value: open.p99,
      unit: 'ms',
      note: `p50 ${open.p50.toFixed(1)}, p90 ${open.p90.toFixed(1)}, achieved ${Math.round(open.achieved)}/s, non2xx ${open.non2xx}, errors ${open.errors}; target < 25`,
    });
  };
  const here = { lon: -68.13, lat: -16.5 };
  await route(`GET /drivers/nearby (${nDrivers} drivers)`, '/api/v1/drivers/nearby?lon=-68.13&lat=-16.5&radius_m=2000&limit=20', NEARBY, [
    `(${here.lon},${here.lat})`,
    circleBox(here, 2000),
    true,
    null,
    2000,
    20,
  ]);

  // ---------------------------------------------------------------- GET /trips over 100,000 trips
  const nTrips = env.quick ? 20_000 : 100_000;
  await env.pool.query(
    `INSERT INTO trip (organization_id, id, status, pickup_location, pickup_address, dropoff_location, dropoff_address, delivery_fee, driver_earning, pickup_pin, delivery_pin, created_at)
     SELECT $1, gen_random_uuid()::text, (ARRAY['pending','completed','cancelled'])[1 + (g % 3)], point(-68.13 + (random() - 0.5) * 0.2, -16.5 + (random() - 0.5) * 0.2), 'a',
            point(-68.12, -16.49), 'b', 15, 10, '1234', '5678', now() - make_interval(secs => g)
       FROM generate_series(1, $2) g`,
    [org, nTrips],
  );
  await env.pool.query('ANALYZE trip');
  const noFilter: TripListFilter = {
    status: null,
    driverId: null,
    territoryId: null,
    merchantId: null,
    orderId: null,
    from: null,
    to: null,
    after: null,
    limit: 51,
  };
  const list = listTripsStatement(noFilter, { scope: null });
  await route(`GET /trips (${nTrips} trips)`, '/api/v1/trips?limit=50', list.statement, list.params);
  const byStatus = await load({
    url: `${env.baseUrl}/api/v1/trips?limit=50&status=pending`,
    headers: { authorization: `Bearer ${admin}` },
    duration: Math.max(2, Math.round(duration / 2)),
    connections,
  });
  env.report({
    scenario: 'logistics',
    metric: 'GET /trips?status=pending p99',
    value: byStatus.p99,
    unit: 'ms',
    note: `p50 ${byStatus.p50} ms, ${Math.round(byStatus.rps)} rps`,
  });

  // ---------------------------------------------------------------- plans (as the tenant role, as the API runs them)
  /** The generic plan of a prepared statement (what runs once the server stops planning it), executed. */
  const explain = async (statement: Prepared, params: unknown[]) => {
    const c = new pg.Client({ connectionString: env.databaseUrl });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query("SELECT set_config('app.organization_id', $1, true)", [org]);
      await c.query('SET LOCAL ROLE app_tenant');
      await c.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await c.query(`PREPARE s AS ${statement.text}`);
      const literal = (v: unknown) =>
        v === null ? 'NULL' : typeof v === 'number' || typeof v === 'boolean' ? String(v) : `'${String(v).replace(/'/g, "''")}'`;
      const { rows } = await c.query(`EXPLAIN (ANALYZE, TIMING OFF) EXECUTE s(${params.map(literal).join(', ')})`);
      await c.query('ROLLBACK');
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    } finally {
      await c.end();
    }
  };
  const p = { lon: -68.13, lat: -16.5 };
  const nearPlan = await explain(NEARBY, [`(${p.lon},${p.lat})`, circleBox(p, 2000), true, null, 2000, 20]);
  env.report({
    scenario: 'logistics',
    metric: 'nearby generic plan uses driver_location_gist',
    value: nearPlan.includes('driver_location_gist') ? 1 : 0,
    unit: 'bool',
  });
  const listPlan = await explain(list.statement, list.params);
  env.report({
    scenario: 'logistics',
    metric: 'GET /trips generic plan: backward primary-key scan',
    value: /Index Scan Backward using trip_organization_id_id_pk/.test(listPlan) && !/Sort/.test(listPlan) ? 1 : 0,
    unit: 'bool',
  });
  const pending = listTripsStatement({ ...noFilter, status: 'pending' }, { scope: null });
  const statusPlan = await explain(pending.statement, pending.params);
  env.report({
    scenario: 'logistics',
    metric: 'GET /trips?status generic plan uses an index',
    value: /Index Scan|Bitmap Index Scan/.test(statusPlan) && !/Seq Scan on trip(?!_)/.test(statusPlan) ? 1 : 0,
    unit: 'bool',
    note: /trip_status_idx/.test(statusPlan) ? 'trip_status_idx' : (/Index Scan[^\n]* using (\S+)/.exec(statusPlan)?.[1] ?? ''),
  });
  const execMs = (plan: string) => Number(/Execution Time: ([0-9.]+) ms/.exec(plan)?.[1] ?? NaN);
  env.report({
    scenario: 'logistics',
    metric: 'nearby SQL execution time',
    value: execMs(nearPlan),
    unit: 'ms',
    note: 'EXPLAIN ANALYZE, database side only',
  });
  env.report({
    scenario: 'logistics',
    metric: 'GET /trips SQL execution time',
    value: execMs(listPlan),
    unit: 'ms',
    note: 'EXPLAIN ANALYZE, database side only',
  });
  if (process.env.BENCH_VERBOSE) console.log(nearPlan, '\n', listPlan, '\n', statusPlan);
}
