import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './server-process.js';

/** nginx (Debian's package; installed with apt-get when missing) in front of several API instances. */
function nginxBinary(): string {
  const found = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (found) return found;
  console.log('nginx not found: apt-get install -y nginx');
  const r = spawnSync('sh', ['-c', 'apt-get install -y nginx || (apt-get update && apt-get install -y nginx)'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (r.status !== 0 || !existsSync('/usr/sbin/nginx')) throw new Error('could not install nginx');
  return '/usr/sbin/nginx';
}

/**
 * `sticky`: a user's requests go to one instance (hashed on the Authorization header; the next one while it is down),
 * as docs/OPERATIONS.md advises for read-your-writes with a read replica. Otherwise round robin.
 */
export async function startNginx(
  ports: number[],
  opts: { sticky?: boolean } = {},
): Promise<{ port: number; child: ChildProcess; dir: string }> {
  const bin = nginxBinary();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cluster-nginx-'));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(path.join(dir, d));
  const port = await freePort();
  const conf = `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream api {
${opts.sticky ? '    hash $http_authorization consistent;' : ''}
${ports.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n')}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 20m;
    location / {
      proxy_pass http://api;
      # An instance that is down: the request goes to the next one (a request already sent is not re-sent unless it is idempotent).
      proxy_connect_timeout 2s;
      proxy_next_upstream error timeout;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      # SSE: no buffering, long reads; clients resume with Last-Event-ID on any instance.
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 1h;
    }
  }
}
`;
  await writeFile(path.join(dir, 'nginx.conf'), conf);
  const child = spawn(bin, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: ['ignore', 'inherit', 'inherit'] });
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (i > 50) throw new Error('nginx did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, child, dir };
}
