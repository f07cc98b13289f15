import client from 'prom-client';
import type { Module } from '../../platform/context.js';
import { createRealtimeService, realtimeOptions, type RealtimeService } from './service.js';
import { realtimeRoutes } from './routes.js';

declare module '../../platform/context.js' {
  interface ServiceRegistry {
    realtime: RealtimeService;
  }
}

export const realtimeModule: Module = {
  name: 'realtime',
  init(ctx) {
    ctx.services.realtime = createRealtimeService(ctx, realtimeOptions(ctx.config.raw));
    ctx.onClose.push(() => ctx.services.realtime.stop());
  },
  async routes(app, ctx) {
    const svc = ctx.services.realtime;
    await svc.start();
    // Open streams would keep the server from closing: end them before it stops accepting.
    app.addHook('preClose', async () => svc.stop());
    const metrics = (app as unknown as { metrics?: client.Registry }).metrics;
    if (metrics && !metrics.getSingleMetric('sse_connections')) {
      new client.Gauge({
        name: 'sse_connections',
        help: 'Open SSE connections on this instance',
        registers: [metrics],
        collect() {
          this.set(svc.connectionCount);
        },
      });
    }
    realtimeRoutes(app, ctx);
  },
};
