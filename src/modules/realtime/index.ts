import client from 'prom-client';
import { withDeps, type Api, type AppContext } from '../../platform/context.js';
import type { RealtimeContext } from './context.js';
import { createRealtimeService, realtimeOptions } from './service/streams.js';
import { realtimeRoutes } from './routes.js';

export type { RealtimeService } from './service/streams.js';

export function createRealtimeModule(ctx: AppContext, deps: RealtimeContext['deps']) {
  const mctx: RealtimeContext = withDeps(ctx, deps);
  const svc = createRealtimeService(mctx, realtimeOptions(ctx.config.settings));
  ctx.onClose.push(() => svc.stop());
  return { name: 'realtime', service: svc, routes: (app: Api) => registerRealtime(app, mctx, svc) };
}

async function registerRealtime(app: Api, ctx: RealtimeContext, svc: ReturnType<typeof createRealtimeService>) {
  await svc.start(app.log);
  ctx.readiness.set('realtime', () => {
    const st = svc.status();
    return { ok: st.listener.state === 'connected', listener: st.listener, hub: st.hub };
  });
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
  if (metrics && !metrics.getSingleMetric('realtime_listener_up')) {
    new client.Gauge({
      name: 'realtime_listener_up',
      help: '1 when the LISTEN connection is up and the hub is live, 0 while it is lost or catching up',
      registers: [metrics],
      collect() {
        const st = svc.status();
        this.set(st.listener.state === 'connected' && st.hub.state === 'live' ? 1 : 0);
      },
    });
    new client.Gauge({
      name: 'realtime_listener_losses',
      help: 'Times the LISTEN connection was lost since start',
      registers: [metrics],
      collect() {
        this.set(svc.status().listener.losses);
      },
    });
    new client.Gauge({
      name: 'realtime_recovered_events',
      help: 'Events delivered from the event log after a lost LISTEN connection, since start',
      registers: [metrics],
      collect() {
        this.set(svc.status().hub.recovered_events);
      },
    });
    new client.Gauge({
      name: 'realtime_watermark',
      help: 'Highest event sequence released to streams (every lower one released or skipped)',
      registers: [metrics],
      collect() {
        this.set(svc.status().hub.watermark);
      },
    });
  }
  realtimeRoutes(app, ctx, svc);
}
