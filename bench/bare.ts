import { spawn } from 'node:child_process';
import { load, type LoadResult } from './lib.js';

/** The framework ceiling: a bare Fastify route (bench/bare-server.ts, its own process), no auth, no database, 20 connections. */
export async function bareFastify(duration: number): Promise<LoadResult> {
  const bare = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts'], {
    env: { ...process.env, PORT: '3199' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve) => bare.stdout!.once('data', () => resolve()));
    return await load({ url: 'http://127.0.0.1:3199/bare', duration });
  } finally {
    bare.kill('SIGTERM');
  }
}
