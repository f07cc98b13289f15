import { spawn } from 'node:child_process';
import { load, type BenchEnv } from './lib.js';

/** GET /me (authenticated, tenant transaction) against the framework ceiling and the database ceiling. */
export default async function meBench(env: BenchEnv) {
  const token = await env.login('admin@demo.test');
  const duration = env.duration;

  // 1. Framework ceiling: a bare Fastify route in its own process.
  const bare = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts'], { env: { ...process.env, PORT: '3199' }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => bare.stdout!.once('data', () => resolve()));
  const bareRes = await load({ url: 'http://127.0.0.1:3199/bare', duration });
  bare.kill('SIGTERM');

  // 2. Database ceiling: the same indexed single-row SELECT through the pool, concurrent workers, no HTTP, no tenant transaction.
  const { rows } = await env.pool.query("SELECT id, organization_id FROM users WHERE email = 'admin@demo.test'");
  const { id } = rows[0];
  const sql = `SELECT u.organization_id, u.id, u.email, u.phone, u.display_name, u.role, u.dispatch, u.subadmin, u.platform_admin, u.active, u.created_at, u.updated_at, o.name AS organization_name
                 FROM users u JOIN organization o ON o.id = u.organization_id WHERE u.id = $1`;
  let n = 0;
  const until = Date.now() + duration * 1000;
  const lat: number[] = [];
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (Date.now() < until) {
        const t0 = performance.now();
        await env.pool.query(sql, [id]);
        lat.push(performance.now() - t0);
        n++;
      }
    }),
  );
  lat.sort((a, b) => a - b);
  const dbRps = n / duration;
  const dbP99 = lat[Math.floor(lat.length * 0.99)];

  // 3. GET /me through the API.
  const me = await load({ url: `${env.baseUrl}/api/v1/me`, headers: { authorization: `Bearer ${token}` }, duration });

  env.report({ scenario: 'me', metric: 'bare fastify rps', value: bareRes.rps, note: `p99 ${bareRes.p99} ms` });
  env.report({ scenario: 'me', metric: 'db ceiling qps', value: dbRps, note: `p99 ${dbP99.toFixed(1)} ms` });
  env.report({ scenario: 'me', metric: 'GET /me rps', value: me.rps, note: `p99 ${me.p99} ms, non2xx ${me.non2xx}, errors ${me.errors}` });
  env.report({ scenario: 'me', metric: '/me ÷ db ceiling', value: me.rps / dbRps, unit: 'ratio', note: 'target ≥ 0.5' });
  env.report({ scenario: 'me', metric: '/me ÷ bare fastify', value: me.rps / bareRes.rps, unit: 'ratio' });
}
