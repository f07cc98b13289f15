import { formatCpu, load, openLoop, stepwiseCeiling, tenantCeiling, withCpu, type BenchEnv } from './lib.js';
import { bareFastify } from './bare.js';

/**
 * GET /me (authenticated, one tenant read) against (a) a bare Fastify route and (b) its database
 * ceiling: the same SELECT in the same tenant exchange through the service's data layer, without HTTP
 * (db.tenantRead: BEGIN, settings and role, the SELECT, COMMIT in one round trip), 20 workers, same
 * run. For reference, the same exchange sent step by step (five round trips, as pgbench would).
 * Latency at an open-loop rate of half the measured maximum.
 */
export default async function meBench(env: BenchEnv) {
  const token = await env.login('admin@demo.test');
  const duration = env.duration;
  const bare = await bareFastify(duration);

  const { rows } = await env.pool.query("SELECT id, organization_id FROM users WHERE email = 'admin@demo.test'");
  const ctx = { organizationId: rows[0].organization_id as string, userId: rows[0].id as string };
  const sql = `SELECT u.organization_id, u.id, u.email, u.phone, u.display_name, u.role, u.dispatch, u.subadmin, u.platform_admin, u.active, u.created_at, u.updated_at, o.name AS organization_name
                 FROM users u JOIN organization o ON o.id = u.organization_id WHERE u.id = $1`;
  const ceiling = await withCpu(env.serverPid, () => tenantCeiling(env, ctx, sql, [ctx.userId], 'read'));
  const stepwise = await stepwiseCeiling(env, ctx, sql, [ctx.userId]);

  const me = await withCpu(env.serverPid, () =>
    load({ url: `${env.baseUrl}/api/v1/me`, headers: { authorization: `Bearer ${token}` }, duration }),
  );
  const rate = Math.max(10, Math.round(me.rps / 2));
  const open = await openLoop({ url: `${env.baseUrl}/api/v1/me`, headers: { authorization: `Bearer ${token}` }, rate, seconds: duration });

  env.report({ scenario: 'me', metric: 'bare Fastify route rps', value: bare.rps, note: `p99 ${bare.p99} ms` });
  env.report({
    scenario: 'me',
    metric: 'tenant exchange, data layer, no HTTP (qps)',
    value: ceiling.rps,
    note: `p99 ${ceiling.p99.toFixed(1)} ms; 1 round trip; ${formatCpu(ceiling.cpu, 'exchange')}`,
  });
  env.report({
    scenario: 'me',
    metric: 'tenant exchange, step by step (qps)',
    value: stepwise.rps,
    note: `p99 ${stepwise.p99.toFixed(1)} ms; 5 round trips, reference`,
  });
  env.report({
    scenario: 'me',
    metric: 'GET /me rps (20 connections)',
    value: me.rps,
    note: `p99 ${me.p99} ms, non2xx ${me.non2xx}, errors ${me.errors}; ${formatCpu(me.cpu)}`,
  });
  env.report({ scenario: 'me', metric: 'GET /me ÷ tenant exchange', value: me.rps / ceiling.rps, unit: 'ratio', note: 'target ≥ 0.6' });
  env.report({ scenario: 'me', metric: 'GET /me ÷ bare Fastify', value: me.rps / bare.rps, unit: 'ratio' });
  env.report({
    scenario: 'me',
    metric: `GET /me open loop p99`,
    value: open.p99,
    unit: 'ms',
    note: `${rate} req/s (half the max), p50 ${open.p50.toFixed(1)}, achieved ${Math.round(open.achieved)}/s, non2xx ${open.non2xx}, errors ${open.errors}`,
  });
}
