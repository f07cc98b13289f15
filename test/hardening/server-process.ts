import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

/** Helpers to run the real server (src/server.ts, or dist/server.js) as a child process: crash test, soak and cluster benches. */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A port that was free a moment ago (bind to 0, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  port: number;
  baseUrl: string;
  child: ChildProcess;
  /** stderr + stdout captured (for failure messages). */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
}

export const SERVER_JWT_SECRET = 'hardening-secret-hardening-secret-0042';

export async function startServer(opts: {
  databaseUrl: string;
  port?: number;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Start the compiled server (dist/server.js, `npm run build`): seconds faster than through tsx. */
  compiled?: boolean;
}): Promise<ServerProcess> {
  const port = opts.port ?? (await freePort());
  let out = '';
  const child = spawn(process.execPath, opts.compiled ? ['dist/server.js'] : ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: opts.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SEED_DEMO: 'true',
      JWT_SECRET: SERVER_JWT_SECRET,
      // The key of the stored secrets (required once secrets are stored with DATABASE_URL).
      SECRETS_KEY: '5e'.repeat(32),
      LOGIN_FREE_ATTEMPTS: '100000',
      LOGIN_ACCOUNT_CEILING: '100000',
      LOGIN_RATE_LIMIT_PER_IP: '100000',
      // Load generators act as a few users: no per-user limits on expensive routes.
      RATE_LIMIT_ORDERS_PER_MINUTE: '0',
      RATE_LIMIT_PLANS_PER_MINUTE: '0',
      RATE_LIMIT_REPORTS_PER_MINUTE: '0',
      DATA_DIR: `/tmp/hardening-data-${port}`,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  // A guard against a server that hangs, not a measure: on a loaded 2-core machine the embedded database's migrations
  // and demo seed alone can take over a minute, so the default is generous.
  const deadline = Date.now() + (opts.timeoutMs ?? 240_000);
  let dead = false;
  void exited.then(() => (dead = true));
  for (;;) {
    if (dead) throw new Error(`server exited during start:\n${out}`);
    try {
      const r = await fetch(`${baseUrl}/api/v1/health`);
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { port, baseUrl, child, output: () => out, exited };
}

export async function stopServer(s: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill(signal);
  await s.exited;
}

export interface ApiResult {
  status: number;
  body: any;
}

/** JSON request; network errors (server killed) come back as status 0. */
export async function api(
  baseUrl: string,
  token: string | null,
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResult> {
  try {
    const r = await fetch(`${baseUrl}/api/v1${urlPath}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await r.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: r.status, body: parsed };
  } catch {
    return { status: 0, body: null };
  }
}

export async function login(baseUrl: string, email: string, password = 'Demo-pass-2026'): Promise<string> {
  const r = await api(baseUrl, null, 'POST', '/auth/login', { email, password });
  if (r.status !== 200) throw new Error(`login ${email}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token as string;
}

/** A local HTTP sink (push webhook / chat cloud API stand-in) that counts deliveries per x-push-id (or body id). */
export async function startSink(opts: { delayMs?: number | (() => number) } = {}) {
  const deliveries = new Map<string, number>();
  let total = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let id = req.headers['x-push-id'] as string | undefined;
      if (!id) {
        try {
          id = JSON.parse(body).id;
        } catch {
          /* ignore */
        }
      }
      id ??= `anon-${total}`;
      deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
      total++;
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        },
        typeof opts.delayMs === 'function' ? opts.delayMs() : (opts.delayMs ?? 0),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/push`,
    deliveries,
    total: () => total,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
