import type { SimReport } from './simulate.js';

/** The report as one self-contained HTML page: figures first, then inline SVG charts (no scripts, no external files). */

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const fmt = (v: number) =>
  !Number.isFinite(v) ? '–' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en') : v.toFixed(v >= 10 ? 1 : 2);

interface Series {
  name: string;
  points: [number, number][];
  dashed?: boolean;
}

/** A line chart: x in seconds of real time, one or more series, a legend under it. */
function lineChart(title: string, unit: string, series: Series[], w = 640, h = 240): string {
  const pad = { l: 56, r: 12, t: 28, b: 34 };
  const all = series.flatMap((s) => s.points).filter(([, y]) => Number.isFinite(y));
  if (all.length === 0) return `<figure><figcaption>${esc(title)}</figcaption><p class="none">no data</p></figure>`;
  const xMax = Math.max(1, ...all.map(([x]) => x));
  const yMax = niceMax(all.reduce((m, [, y]) => Math.max(m, y), -Infinity)); // no spread: series can be long
  const X = (x: number) => pad.l + (x / xMax) * (w - pad.l - pad.r);
  const Y = (y: number) => h - pad.b - (y / yMax) * (h - pad.t - pad.b);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (f) =>
        `<line x1="${pad.l}" x2="${w - pad.r}" y1="${Y(yMax * f)}" y2="${Y(yMax * f)}" class="grid"/><text x="${pad.l - 6}" y="${Y(yMax * f) + 4}" text-anchor="end">${fmt(yMax * f)}</text>`,
    )
    .join('');
  const xticks = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => `<text x="${X(xMax * f)}" y="${h - pad.b + 16}" text-anchor="middle">${Math.round(xMax * f)} s</text>`)
    .join('');
  const lines = series
    .map((s, i) => {
      const pts = s.points.filter(([, y]) => Number.isFinite(y));
      if (pts.length === 0) return '';
      const d = pts.map(([x, y], k) => `${k ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join('');
      return `<path d="${d}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`;
    })
    .join('');
  const legend = series.map((s, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(s.name)}</span>`).join('');
  return `<figure><figcaption>${esc(title)} <small>(${esc(unit)}; x: real seconds since the day began)</small></figcaption>
<svg viewBox="0 0 ${w} ${h}" width="100%" role="img" aria-label="${esc(title)}">${grid}${xticks}${lines}</svg><div class="legend">${legend}</div></figure>`;
}

/** Horizontal bars: one row per label, stacked values (e.g. 2xx / 4xx / 5xx). */
function barChart(title: string, rows: { label: string; values: number[] }[], keys: string[], colors: string[]): string {
  if (rows.length === 0) return `<figure><figcaption>${esc(title)}</figcaption><p class="none">no data</p></figure>`;
  const w = 720;
  const rowH = 22;
  const labelW = 300;
  const h = rows.length * rowH + 30;
  const max = Math.max(1, ...rows.map((r) => r.values.reduce((a, b) => a + b, 0)));
  const scale = (v: number) => (v / max) * (w - labelW - 70);
  const bars = rows
    .map((r, i) => {
      let x = labelW;
      const y = 8 + i * rowH;
      const segs = r.values
        .map((v, k) => {
          const seg = `<rect x="${x}" y="${y}" width="${Math.max(v > 0 ? 1.5 : 0, scale(v))}" height="${rowH - 6}" fill="${colors[k]}"><title>${esc(keys[k])}: ${v}</title></rect>`;
          x += scale(v);
          return seg;
        })
        .join('');
      const total = r.values.reduce((a, b) => a + b, 0);
      const extra = r.values.slice(1).some((v) => v > 0)
        ? ` (${keys
            .slice(1)
            .map((k, j) => `${k} ${r.values[j + 1]}`)
            .join(', ')})`
        : '';
      return `<text x="${labelW - 6}" y="${y + 12}" text-anchor="end">${esc(r.label)}</text>${segs}<text x="${x + 4}" y="${y + 12}">${total}${esc(extra)}</text>`;
    })
    .join('');
  const legend = keys.map((k, i) => `<span><i style="background:${colors[i]}"></i>${esc(k)}</span>`).join('');
  return `<figure><figcaption>${esc(title)}</figcaption><svg viewBox="0 0 ${w} ${h}" width="100%" role="img" aria-label="${esc(title)}">${bars}</svg><div class="legend">${legend}</div></figure>`;
}

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function renderHtml(r: SimReport): string {
  const verdict = r.verdict.ok
    ? '<p class="ok">PASS: no server errors, no lost or duplicated events, every order where expected</p>'
    : `<p class="bad">FAIL: ${esc(r.verdict.problems.join('; '))}</p>`;
  const interrupted = r.interrupted
    ? `<p class="bad">INTERRUPTED by ${esc(r.interrupted_by ?? 'a signal')}: the play was stopped early; the figures below are those gathered until then.</p>`
    : '';
  const unverified = r.orders.unverified.count
    ? `<p class="bad">${r.orders.unverified.count} orders unverified: not read back at the end (${esc(r.orders.unverified.reasons.join('; '))}); for example ${esc(r.orders.unverified.sample.join(', '))}</p>`
    : '';
  const routes = Object.entries(r.routes).sort((a, b) => b[1].count - a[1].count);
  const table = routes
    .map(
      ([name, s]) =>
        `<tr><td>${esc(name)}</td><td>${s.count}</td><td>${fmt(s.count / r.run.real_seconds)}</td><td>${fmt(s.p50_ms)}</td><td>${fmt(s.p99_ms)}</td><td>${s.c4xx}</td><td class="${s.c5xx + s.network ? 'bad' : ''}">${s.c5xx + s.network}</td></tr>`,
    )
    .join('');
  const top = routes.slice(0, 6).map(([n]) => n);
  const p99 = lineChart(
    'p99 latency per route over time',
    'ms',
    top.map((n) => ({ name: n, points: r.timeline.map((b) => [b.t, b.routes[n]?.p99_ms ?? NaN] as [number, number]) })),
  );
  const p50 = lineChart(
    'p50 latency per route over time',
    'ms',
    top.map((n) => ({ name: n, points: r.timeline.map((b) => [b.t, b.routes[n]?.p50_ms ?? NaN] as [number, number]) })),
  );
  const rps = lineChart('Requests and errors per second', 'req/s', [
    { name: 'requests/s', points: r.timeline.map((b) => [b.t, b.requests / b.seconds]) },
    { name: '4xx/s', points: r.timeline.map((b) => [b.t, b.c4xx / b.seconds]) },
    { name: '5xx + network errors/s', points: r.timeline.map((b) => [b.t, b.errors / b.seconds]) },
  ]);
  const gps = lineChart('GPS ingest', 'points/s', [
    { name: 'GPS points accepted/s', points: r.timeline.map((b) => [b.t, b.gps_points / b.seconds]) },
  ]);
  const orders = lineChart('Orders created (the day’s rate curve)', 'orders per simulated hour', [
    { name: 'orders/simulated hour', points: r.timeline.map((b) => [b.t, (b.orders / b.seconds) * (3600 / r.config.compression)]) },
    { name: 'planned rate', points: r.timeline.map((b) => [b.t, b.planned_rate_per_hour]), dashed: true },
  ]);
  const rss = lineChart('Server memory (GET /admin/mobile-health)', 'MB', [
    { name: 'RSS', points: r.server.samples.map((s) => [s.t, s.rss_bytes / 2 ** 20]) },
    { name: 'heap used', points: r.server.samples.map((s) => [s.t, s.heap_used_bytes / 2 ** 20]), dashed: true },
  ]);
  const lagSeries = (pick: (b: SimReport['timeline'][number]) => { p50_ms: number; p99_ms: number; count: number }) => [
    { name: 'p50', points: r.timeline.map((b) => [b.t, pick(b).count ? pick(b).p50_ms : NaN] as [number, number]) },
    { name: 'p99', points: r.timeline.map((b) => [b.t, pick(b).count ? pick(b).p99_ms : NaN] as [number, number]) },
  ];
  const ingestLag = lineChart(
    'GPS ingest lag: point recorded → on a dispatcher’s stream',
    'ms',
    lagSeries((b) => b.gps_ingest_lag),
  );
  const eventLag = lineChart(
    'Trip events: occurred → on a dispatcher’s stream',
    'ms',
    lagSeries((b) => b.stream_event_lag),
  );
  const webhookLag = r.webhooks.available
    ? lineChart(
        'Webhook delivery lag: event → received',
        'ms',
        lagSeries((b) => b.webhook_lag),
      )
    : `<figure><figcaption>Webhook delivery lag</figcaption><p class="none">not measured: ${esc(r.webhooks.reason ?? '')}</p></figure>`;
  const cpu = lineChart('CPU: the server, PostgreSQL and the simulator (/proc)', '% of one core', [
    { name: 'server', points: r.server.processes.map((p) => [p.t, p.cpu_percent ?? NaN]) },
    { name: 'PostgreSQL', points: r.server.processes.map((p) => [p.t, p.database_cpu_percent ?? NaN]) },
    { name: 'simulator', points: r.server.processes.map((p) => [p.t, p.simulator_cpu_percent ?? NaN]) },
  ]);
  const queues = lineChart('Waiting: for a simulator socket, and for a server database connection', 'requests', [
    { name: 'in flight from the simulator', points: r.server.processes.map((p) => [p.t, p.simulator_in_flight]) },
    { name: 'queued in the simulator', points: r.server.processes.map((p) => [p.t, p.simulator_queued]) },
    { name: 'server pool: in use', points: r.server.samples.map((p) => [p.t, p.pool_in_use ?? NaN]) },
    { name: 'server pool: waiting', points: r.server.samples.map((p) => [p.t, p.pool_waiting ?? NaN]) },
  ]);
  const loopDelay = lineChart('The simulator’s event loop: how late it ran (its latencies include this)', 'ms', [
    { name: 'p99', points: r.server.processes.map((p) => [p.t, p.simulator_loop_delay_p99_ms ?? NaN]) },
    { name: 'max', points: r.server.processes.map((p) => [p.t, p.simulator_loop_delay_max_ms ?? NaN]) },
  ]);
  const load = lineChart('Machine load average (1 min)', `${r.run.cpus} CPUs`, [
    { name: 'load average', points: r.server.processes.map((p) => [p.t, p.load1]) },
  ]);
  const dbSize = r.database.available
    ? lineChart('Database size (pg_database_size)', 'MB', [
        { name: 'database', points: r.database.samples.map((s) => [s.t, s.bytes / 2 ** 20]) },
      ])
    : `<figure><figcaption>Database size</figcaption><p class="none">${esc(r.database.reason ?? '')}</p></figure>`;
  const statements = !r.database.available
    ? `<p class="none">${esc(r.database.reason ?? '')}</p>`
    : !r.database.statements.available
      ? `<p class="none">${esc(r.database.statements.reason ?? '')}</p>`
      : `<table><tr><th>statement</th><th>calls</th><th>total ms</th><th>mean ms</th><th>max ms</th><th>rows</th></tr>${r.database.statements.top
          .map(
            (q) =>
              `<tr><td class="q">${esc(q.query)}</td><td>${q.calls}</td><td>${fmt(q.total_ms)}</td><td>${fmt(q.mean_ms)}</td><td>${fmt(q.max_ms)}</td><td>${q.rows}</td></tr>`,
          )
          .join('')}</table>`;
  const relations = r.database.largest_relations.map((x) => `<tr><td>${esc(x.name)}</td><td>${fmt(x.bytes / 2 ** 20)}</td></tr>`).join('');
  const reqBars = barChart(
    'Requests per route',
    routes.map(([n, s]) => ({ label: n, values: [s.count - s.c4xx - s.c5xx - s.network, s.c4xx, s.c5xx + s.network] })),
    ['2xx/3xx', '4xx', '5xx/network'],
    ['#2ca02c', '#ff7f0e', '#d62728'],
  );
  // Hundreds of streams: summed by kind, with the ones that lost or doubled an event listed on their own.
  type StreamRow = SimReport['streams'][number];
  const streamRows: StreamRow[] =
    r.streams.length <= 24
      ? r.streams
      : [
          ...(['organization', 'me'] as const).flatMap((kind) => {
            const of = r.streams.filter((s) => s.kind === kind);
            if (!of.length) return [];
            const sum = (f: (s: StreamRow) => number) => of.reduce((a, s) => a + f(s), 0);
            return [
              {
                name: `${kind === 'organization' ? 'dispatchers' : 'customers'}: all ${of.length} streams`,
                kind,
                received: sum((s) => s.received),
                expected: sum((s) => s.expected),
                lost: sum((s) => s.lost),
                duplicates: sum((s) => s.duplicates),
                reconnects: sum((s) => s.reconnects),
                resets: sum((s) => s.resets),
                last_id: null,
              },
            ];
          }),
          ...r.streams.filter((s) => s.lost || s.duplicates).slice(0, 20),
        ];
  const streamBars = barChart(
    'Stream events: expected ones received, lost, duplicated (other events received are counted in the table)',
    streamRows.map((s) => ({ label: s.name, values: [s.expected - s.lost, s.lost, s.duplicates] })),
    ['expected and received', 'lost', 'duplicated'],
    ['#1f77b4', '#d62728', '#9467bd'],
  );
  const ordersTable = Object.entries(r.orders.by_status)
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>City day simulation: ${esc(r.run.started_at)}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:16px;color:#222}
h1{font-size:22px;margin:0 0 4px}.sub{color:#555;margin:0 0 12px}
.ok{background:#e6f4ea;border-left:6px solid #2ca02c;padding:8px 12px;font-weight:600}
.bad{background:#fdecea;border-left:6px solid #d62728;padding:8px 12px;font-weight:600}
td.bad{padding:0 6px;border:0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:8px;margin:12px 0}
.card{background:#f4f6f8;border-radius:6px;padding:8px 10px}.card b{display:block;font-size:22px}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
figure{margin:0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px}
figcaption{font-weight:600;margin-bottom:4px}figcaption small{font-weight:400;color:#666}
svg text{font-size:11px;fill:#333}svg .grid{stroke:#e3e3e3}
.legend span{display:inline-block;margin-right:12px;font-size:13px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}td:first-child,th:first-child{text-align:left}
.none{color:#888}td.q{text-align:left;font:12px ui-monospace,monospace;max-width:760px;word-break:break-word}
</style></head><body>
<h1>A city's day, simulated</h1>
<p class="sub">${esc(r.run.base_url)} · seed ${r.config.seed} · scale ${r.config.scale} (${r.city.drivers} drivers, ${r.city.merchants} merchants, ${r.city.customers} customers) · ${r.config.duration_s} s real × ${r.config.compression} = ${fmt((r.config.duration_s * r.config.compression) / 3600)} simulated hours from ${r.config.start_hour}:00 · load average at start ${esc(r.run.load_average.map((l) => l.toFixed(2)).join(' / '))} on ${r.run.cpus} CPUs</p>
${interrupted}${verdict}${unverified}
<div class="cards">
<div class="card"><b>${r.totals.requests.toLocaleString('en')}</b>requests (${fmt(r.totals.requests / r.run.real_seconds)}/s)</div>
<div class="card"><b>${r.totals.server_errors}</b>5xx / network errors</div>
<div class="card"><b>${fmt(r.setup.seconds)} s</b>to build the city (${r.setup.requests} requests, ${r.setup.server_errors} errors)</div>
<div class="card"><b>${r.orders.created}</b>orders created</div>
<div class="card"><b>${r.orders.unexpected}</b>orders not where expected</div>
<div class="card"><b>${r.gps.points_accepted.toLocaleString('en')}</b>GPS points (${fmt(r.gps.points_accepted / r.run.real_seconds)}/s)</div>
<div class="card"><b>${r.streams.reduce((a, s) => a + s.lost, 0)} / ${r.streams.reduce((a, s) => a + s.duplicates, 0)}</b>events lost / duplicated</div>
<div class="card"><b>${fmt((r.server.samples.at(-1)?.rss_bytes ?? NaN) / 2 ** 20)} MB</b>server RSS at the end (${fmt((r.server.samples[0]?.rss_bytes ?? NaN) / 2 ** 20)} at start)</div>
<div class="card"><b>${r.tracking.polls}</b>tracking-link polls by recipients</div>
<div class="card"><b>${fmt(r.gps.ingest_lag.p99_ms)} ms</b>GPS ingest lag p99 (p50 ${fmt(r.gps.ingest_lag.p50_ms)}, ${r.gps.ingest_lag.count} batches)</div>
<div class="card"><b>${fmt(r.stream_event_lag.p99_ms)} ms</b>trip event → dispatcher's stream p99 (p50 ${fmt(r.stream_event_lag.p50_ms)})</div>
<div class="card"><b>${r.webhooks.available ? `${fmt(r.webhooks.lag.p99_ms)} ms` : '–'}</b>webhook lag p99${r.webhooks.available ? ` (p50 ${fmt(r.webhooks.lag.p50_ms)}; ${r.webhooks.received} received, ${r.webhooks.lost} lost)` : ': not measured'}</div>
<div class="card"><b>${r.database.available ? `${fmt(r.database.growth_bytes / 2 ** 20)} MB` : '–'}</b>database growth over the day</div>
<div class="card"><b>${r.proofs.photos_uploaded}</b>proof photos uploaded (${fmt(r.proofs.bytes / 1024)} KiB, ${r.proofs.failed} failed; share ${fmt(r.proofs.share * 100)} %)</div>
<div class="card"><b>${r.plans.computed} / ${r.plans.requested}</b>optimizer plans computed${r.plans.every_min ? ` every ${r.plans.every_min} simulated min (${r.plans.busy} busy, ${r.plans.failed} refused; p50 ${fmt(r.plans.latency.p50_ms)} ms, p99 ${fmt(r.plans.latency.p99_ms)} ms; ${r.plans.trips_planned} trips planned, not committed)` : ': disabled'}</div>
<div class="card"><b>${esc(r.opening_hours.hours)}</b>branch hours (${esc(r.opening_hours.time_zone)}): ${r.opening_hours.open_at_start} of ${r.opening_hours.branches} open at start, ${r.opening_hours.orders_refused_closed} orders refused closed</div>
<div class="card"><b>${Object.values(r.vehicles.by_type).reduce((a, v) => a + v.drivers, 0)}</b>vehicles: ${esc(
    Object.entries(r.vehicles.by_type)
      .map(([t, v]) => `${v.drivers} ${t} (${v.capacity_units} units)`)
      .join(', '),
  )}</div>
</div>
<div class="grid2">${rps}${orders}${p99}${p50}${gps}${ingestLag}${eventLag}${webhookLag}${rss}${cpu}${loopDelay}${queues}${load}${dbSize}</div>
${reqBars}
${streamBars}
<h2>Routes</h2><table><tr><th>route</th><th>requests</th><th>per s</th><th>p50 ms</th><th>p99 ms</th><th>4xx</th><th>5xx+net</th></tr>${table}</table>
<h2>Slowest statements (pg_stat_statements, by total time since the day began)</h2>${statements}
<h2>Largest tables at the end</h2>${relations ? `<table><tr><th>table</th><th>MB</th></tr>${relations}</table>` : '<p class="none">not measured</p>'}
<h2>Orders at the end</h2><table><tr><th>status</th><th>orders</th></tr>${ordersTable}</table>
<h2>Streams</h2><table><tr><th>stream</th><th>events received</th><th>expected</th><th>lost</th><th>duplicated</th><th>reconnects</th><th>resets</th></tr>${streamRows
    .map(
      (s) =>
        `<tr><td>${esc(s.name)}</td><td>${s.received}</td><td>${s.expected}</td><td>${s.lost}</td><td>${s.duplicates}</td><td>${s.reconnects}</td><td>${s.resets}</td></tr>`,
    )
    .join('')}</table>
</body></html>`;
}
