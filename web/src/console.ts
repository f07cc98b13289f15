import L from 'leaflet';
import './style.css';
import { all, api, login, logout, ok, session, type DispatchPlan, type Driver, type Trip, type TripStatus, type User } from './api';
import { choicesOf } from './choices';
import { renderCash } from './console-cash';
import { renderIntegrations } from './console-integrations';
import { listHubs, renderHubs } from './console-hubs';
import { $, clear, h } from './dom';
import {
  count,
  errorText,
  fmtAge,
  fmtClock,
  fmtEta,
  fmtKm,
  fmtLate,
  fmtLoad,
  fmtTime,
  fmtWindow,
  getLang,
  label,
  setLang,
  t,
  tf,
  type Lang,
} from './i18n';
import { COLORS, createMap, disposeMap, MarkerSet, toLatLng } from './map';
import { openStream, type StreamEvent } from './sse';
import { secretForms } from './console-secrets';

/** The dispatcher console: login, live map, dispatch board, trip detail, optimized dispatch, approvals, settings. */

const ACTIVE: TripStatus[] = ['pending', 'assigned', 'accepted', 'picked_up', 'in_transit'];
/** Trouble first: a failed delivery (returning, then returned, or failed when closed) stays on the board and the map. */
const TROUBLE: TripStatus[] = ['returning', 'failed', 'returned'];
/** Statuses whose trip is still on the road (drawn on the map; a driver's load). */
const ON_ROAD: TripStatus[] = [...ACTIVE, 'returning'];
const COLUMNS: { id: string; statuses: TripStatus[] }[] = [
  { id: 'trouble', statuses: TROUBLE },
  ...ACTIVE.map((s) => ({ id: s, statuses: [s] })),
  { id: 'completed', statuses: ['completed'] },
  { id: 'cancelled', statuses: ['cancelled'] },
];
const STATUS_FILTER: TripStatus[] = [...ACTIVE, ...TROUBLE, 'completed', 'cancelled'];
/** Who the console is for; other accounts (drivers, merchants, customers) are told where to go. */
const CONSOLE_KINDS = ['platform', 'administrator', 'dispatch', 'subadmin'];
const isStaff = (u: User | null) => !!u && CONSOLE_KINDS.includes(u.kind);
/** The fields of the promise and the live ETA (present once the server gives them). */
type Timing = Partial<{
  promised_at: string | null;
  eta_pickup_at: string | null;
  eta_dropoff_at: string | null;
  late_by_s: number | null;
  recipient_name: string | null;
  recipient_phone: string | null;
}>;
const timing = (tr: Trip) => tr as Trip & Timing;
type DriverGps = Driver & Partial<{ location_stale: boolean }>;
/** Cards drawn per column; the rest is counted (a column of 2,000 cards helps nobody and costs layout). */
const CARDS_PER_COLUMN = 150;
const ROUTE_COLORS = ['#dc2626', '#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be185d', '#4d7c0f'];

const root = $('#app');

interface State {
  drivers: Map<string, Driver>;
  trips: Map<string, Trip>;
  territories: { id: string; name: string }[];
  /** Active hubs a plan's routes may start or end at. */
  hubs: { id: string; name: string }[];
  merchants: Map<string, string>;
  filter: { territory: string; merchant: string; status: string; search: string };
  selected: Set<string>;
  plan: DispatchPlan | null;
  live: boolean;
}

const state: State = {
  drivers: new Map(),
  trips: new Map(),
  territories: [],
  hubs: [],
  merchants: new Map(),
  filter: { territory: '', merchant: '', status: '', search: '' },
  selected: new Set(),
  plan: null,
  live: false,
};

let map: L.Map | null = null;
let driverMarkers: MarkerSet | null = null;
let pickupMarkers: MarkerSet | null = null;
let dropoffMarkers: MarkerSet | null = null;
let planLayer: L.LayerGroup | null = null;
let stopStream: (() => void) | null = null;
let driverPoll: ReturnType<typeof setInterval> | null = null;
/** The open trip detail: refreshed in place when its trip's events arrive (status, timeline, ETA). */
let openDetail: { id: string; update: (trip: Trip) => void; refreshTracking: () => void } | null = null;

const isSubadmin = () => session.user()?.kind === 'subadmin';
const isAdmin = () => ['administrator', 'platform'].includes(session.user()?.kind ?? '');

function toast(message: string, kind: 'info' | 'error' = 'info') {
  const box = document.getElementById('toasts');
  if (!box) return;
  const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, message);
  box.append(el);
  setTimeout(() => el.remove(), 6000);
}

const fail = (e: unknown) => toast(`${t('error')}: ${errorText(e)}`, 'error');

/* ---------------- login ---------------- */

/** The login form; `notice` says why it is shown again (the session expired, the account is not for the console). */
function renderLogin(notice?: HTMLElement | string) {
  stopStream?.();
  stopStream = null;
  if (driverPoll) clearInterval(driverPoll);
  disposeMap(map);
  map = null;
  openDetail = null;
  const err = h('p', { class: 'error', role: 'alert', id: 'login-error' });
  const form = h(
    'form',
    { class: 'login', 'aria-labelledby': 'login-title' },
    h('h1', { id: 'login-title' }, t('title')),
    notice ? h('div', { class: 'notice', id: 'login-notice', role: 'status' }, notice) : null,
    h('label', { for: 'email' }, t('email')),
    h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true }),
    h('label', { for: 'password' }, t('password')),
    h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
    h('button', { type: 'submit', class: 'primary' }, t('login')),
    err,
    langPicker(),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    try {
      const user = await login(String(data.get('email')), String(data.get('password')));
      if (!isStaff(user)) return await refuse(user);
      if (location.hash === '#/dispatch') renderShell();
      else location.hash = '#/dispatch'; // hashchange renders
    } catch (e) {
      err.textContent = `${t('loginFailed')}: ${errorText(e)}`;
    }
  });
  clear(root, h('main', { id: 'main', class: 'login-page' }, form));
  ($('#email', form) as HTMLInputElement).focus();
}

/** A driver, merchant or customer account: its session is ended at once and the page says where to go instead. */
async function refuse(user: User) {
  await logout();
  const where =
    user.kind === 'repartidor'
      ? h('p', null, `${t('goDriver')} `, h('a', { href: '/driver' }, '/driver'))
      : user.kind === 'comercio'
        ? h('p', null, `${t('goMerchant')} `, h('a', { href: '/merchant' }, '/merchant'))
        : h('p', null, t('goCustomer'));
  renderLogin(h('div', { id: 'not-staff' }, h('p', null, h('strong', null, t('staffOnly'))), where));
}

function langPicker() {
  const sel = h(
    'select',
    { id: 'lang', 'aria-label': t('language') },
    h('option', { value: 'es', selected: getLang() === 'es' }, 'Español'),
    h('option', { value: 'en', selected: getLang() === 'en' }, 'English'),
  );
  sel.addEventListener('change', () => {
    setLang(sel.value as Lang);
    if (session.user()) renderShell();
    else renderLogin();
  });
  return sel;
}

/* ---------------- shell ---------------- */

function renderShell() {
  const user = session.user();
  if (!user) return renderLogin();
  if (!isStaff(user)) return void refuse(user);
  openDetail = null;
  document.title = t('title');
  const view = location.hash.replace(/^#\//, '') || 'dispatch';
  const tab = (id: string, text: string) =>
    h('a', { href: `#/${id}`, class: 'tab', 'aria-current': view === id ? 'page' : undefined }, text);
  stopStream?.();
  stopStream = null;
  if (driverPoll) clearInterval(driverPoll);
  disposeMap(map);
  map = null;
  clear(
    root,
    h('a', { href: '#main', class: 'skip' }, t('skipToContent')),
    h(
      'header',
      { class: 'top' },
      h('h1', { class: 'brand' }, t('title')),
      h(
        'nav',
        { 'aria-label': t('title') },
        tab('dispatch', t('dispatch')),
        tab('approvals', t('approvals')),
        tab('cash', t('cashTab')),
        // API keys, imports and GPS apps: the organization's administrators (the key and device routes are theirs).
        user.kind === 'administrator' ? tab('integrations', t('integrationsTab')) : null,
        tab('hubs', t('hubsTab')),
        tab('settings', t('settings')),
      ),
      h('span', { class: 'live', id: 'live', 'data-live': String(state.live), role: 'status' }, state.live ? t('live') : t('reconnecting')),
      langPicker(),
      h('span', { class: 'who' }, user.display_name),
      h('button', { type: 'button', id: 'logout', title: user.display_name, onclick: () => void logout() }, t('logout')),
    ),
    h('p', { id: 'live-reason', class: 'notice banner', role: 'status', hidden: true }),
    h('main', { id: 'main', tabindex: '-1' }),
    h('div', { id: 'toasts', class: 'toasts', 'aria-live': 'polite' }),
    h('dialog', { id: 'detail', 'aria-labelledby': 'detail-title' }),
  );
  const main = $('#main');
  if (view === 'approvals') void renderApprovals(main);
  else if (view === 'settings') void renderSettings(main);
  else if (view === 'cash') void renderCash(main, toast).catch(fail);
  else if (view === 'integrations' && user.kind === 'administrator') renderIntegrations(main, toast);
  else if (view === 'hubs') void renderHubs(main, toast).catch(fail);
  else void renderDispatch(main);
}

window.addEventListener('hashchange', () => session.user() && renderShell());
session.onEnd((why) => renderLogin(why === 'expired' ? t('sessionExpired') : undefined));

/* ---------------- dispatch: map + board ---------------- */

function driverState(d: Driver): 'available' | 'busy' | 'offline' {
  if (!d.available) return 'offline';
  return d.active_trips > 0 ? 'busy' : 'available';
}

async function loadDrivers() {
  const list = await all((cursor) => ok(api.GET('/api/v1/drivers', { params: { query: { status: 'approved', limit: 200, cursor } } })));
  state.drivers = new Map(list.map((d) => [d.id, d]));
}

async function loadTrips() {
  const lists = await Promise.all([
    ...ACTIVE.map((status) => all((cursor) => ok(api.GET('/api/v1/trips', { params: { query: { status, limit: 200, cursor } } })))),
    all((cursor) => ok(api.GET('/api/v1/trips', { params: { query: { status: 'returning', limit: 200, cursor } } }))),
    ...(['failed', 'returned', 'completed', 'cancelled'] as const).map((status) =>
      ok(api.GET('/api/v1/trips', { params: { query: { status, limit: 50 } } })).then((r) => r.data),
    ),
  ]);
  state.trips = new Map(lists.flat().map((tr) => [tr.id, tr]));
}

async function loadFilters() {
  const [territories, merchants, hubs] = await Promise.all([
    all((cursor) => ok(api.GET('/api/v1/territories', { params: { query: { limit: 200, cursor } } })), 1000).catch(() => []),
    all((cursor) => ok(api.GET('/api/v1/merchants', { params: { query: { limit: 200, cursor } } })), 2000).catch(() => []),
    listHubs().catch(() => []),
  ]);
  state.territories = territories.map((x) => ({ id: x.id, name: x.name }));
  state.hubs = hubs.filter((x) => x.active).map((x) => ({ id: x.id, name: x.name }));
  state.merchants = new Map(merchants.map((m) => [m.id, m.name]));
}

let frame = 0;
function schedule() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    drawMap();
    drawExceptions();
    drawBoard();
    drawDrivers();
  });
}

async function renderDispatch(main: HTMLElement) {
  const mapEl = h('div', { id: 'map', class: 'map', 'aria-label': t('map'), 'data-drivers': '0', 'data-trips': '0' });
  clear(
    main,
    h(
      'div',
      { class: 'dispatch' },
      h(
        'section',
        { class: 'map-pane', 'aria-labelledby': 'map-title' },
        h('h2', { id: 'map-title', class: 'sr-only' }, t('map')),
        mapEl,
        h(
          'ul',
          { class: 'legend', 'aria-label': t('drivers') },
          ...(['available', 'busy', 'offline', 'pickup', 'dropoff'] as const).map((k) =>
            h('li', null, h('span', { class: 'dot', style: `background:${COLORS[k]}` }), label(k)),
          ),
        ),
        h('details', { class: 'driver-list' }, h('summary', { id: 'drivers-summary' }, t('drivers')), h('div', { id: 'drivers' })),
      ),
      h(
        'section',
        { class: 'board-pane', 'aria-labelledby': 'board-title' },
        h('h2', { id: 'board-title' }, t('board')),
        filtersForm(),
        h(
          'section',
          { id: 'exceptions', class: 'exceptions', 'aria-labelledby': 'exc-title' },
          h('h2', { id: 'exc-title' }, t('exceptions')),
          h('div', { id: 'exc-counts', class: 'exc-counts' }),
          h('ul', { id: 'exc-list', class: 'exc-list' }),
        ),
        h(
          'div',
          { class: 'toolbar' },
          h('button', { type: 'button', id: 'optimize', class: 'primary', disabled: true, onclick: () => void optimize() }, t('optimize')),
          h('span', { id: 'selection' }),
          h(
            'div',
            { class: 'plan-ends' },
            h(
              'label',
              { for: 'plan-start' },
              t('routeStart'),
              h('select', { id: 'plan-start' }, h('option', { value: '' }, t('startDriver'))),
            ),
            h('label', { for: 'plan-end' }, t('routeEnd'), h('select', { id: 'plan-end' }, h('option', { value: '' }, t('endOpen')))),
          ),
        ),
        h('div', { id: 'plan', class: 'plan', hidden: true }),
        h('nav', { id: 'col-nav', class: 'col-nav', 'aria-label': t('columns') }),
        // Scrolls sideways when the columns do not fit: focusable so keyboard users can scroll it too.
        h('div', { id: 'board', class: 'board', role: 'region', 'aria-label': t('board'), tabindex: '0' }),
      ),
    ),
  );
  map = createMap(mapEl);
  fitted = false;
  driverMarkers = new MarkerSet(map, 6);
  pickupMarkers = new MarkerSet(map, 4);
  dropoffMarkers = new MarkerSet(map, 4);
  planLayer = L.layerGroup().addTo(map);
  try {
    await Promise.all([loadDrivers(), loadTrips(), loadFilters()]);
  } catch (e) {
    fail(e);
  }
  void loadRejectedAgain().catch(() => undefined);
  fillFilterOptions();
  fitOnce();
  schedule();
  if (state.plan) drawPlan();
  stopStream = openStream(isSubadmin() ? 'territories' : 'organization', {
    event: onEvent,
    reset: () => void Promise.all([loadDrivers(), loadTrips()]).then(schedule, fail),
    state: (live, down) => {
      state.live = live;
      const el = document.getElementById('live');
      if (el) {
        el.dataset.live = String(live);
        el.dataset.reason = down?.reason ?? '';
        el.dataset.retryMs = down?.retryInMs === null || down?.retryInMs === undefined ? '' : String(down.retryInMs);
        el.textContent = live ? t('live') : t('reconnecting');
      }
      // Why it is not live, below the header (the per-user limit says so and what to do).
      const why = document.getElementById('live-reason');
      if (why) {
        const s = Math.ceil((down?.retryInMs ?? 0) / 1000);
        why.hidden = live || !down || down.reason === 'session' || down.retryInMs === null;
        why.textContent =
          live || !down ? '' : down.reason === 'limit' ? tf('streamLimit', { n: down.limit ?? '?', s }) : tf('streamRetry', { s });
      }
    },
  });
  // Idle drivers send no trip events: their positions and availability are polled.
  driverPoll = setInterval(() => void loadDrivers().then(schedule, () => undefined), 30_000);
}

let fitted = false;
function fitOnce() {
  if (fitted || !map) return;
  const pts = [...state.drivers.values()].map((d) => toLatLng(d.last_location)).filter((p): p is L.LatLngTuple => !!p);
  for (const tr of state.trips.values()) if (ON_ROAD.includes(tr.status)) pts.push(toLatLng(tr.dropoff_location)!);
  if (pts.length) {
    map.fitBounds(L.latLngBounds(pts), { padding: [30, 30], maxZoom: 15 });
    fitted = true;
  }
}

const tripEvents = new Map<string, ReturnType<typeof setTimeout>>();
function onEvent(e: StreamEvent) {
  if (e.type === 'trip.rejected_repeatedly') void loadRejectedAgain().catch(() => undefined);
  if (e.entity_type !== 'trip') return;
  const p = e.payload as { driver_id?: string | null; location?: { coordinates: number[] }; recorded_at?: string };
  if (e.type === 'trip.location_updated' && p.driver_id && p.location) {
    const d = state.drivers.get(p.driver_id);
    if (d) {
      state.drivers.set(d.id, {
        ...d,
        last_location: { type: 'Point', coordinates: p.location.coordinates as [number, number] },
        last_location_at: p.recorded_at ?? d.last_location_at,
        location_stale: false,
      } as DriverGps);
      schedule();
    }
    // The open trip's live ETA follows its driver's position.
    if (openDetail && state.trips.get(openDetail.id)?.driver_id === p.driver_id) openDetail.refreshTracking();
    return;
  }
  // Other trip events: refetch the trip (a burst of events for one trip is one request) and its driver's load.
  clearTimeout(tripEvents.get(e.entity_id));
  tripEvents.set(
    e.entity_id,
    setTimeout(async () => {
      tripEvents.delete(e.entity_id);
      try {
        const trip = await ok(api.GET('/api/v1/trips/{id}', { params: { path: { id: e.entity_id } } }));
        state.trips.set(trip.id, trip);
        if (trip.status !== 'pending') state.selected.delete(trip.id);
        if (trip.driver_id || p.driver_id) await loadDrivers();
        schedule();
        if (openDetail?.id === trip.id) openDetail.update(trip);
      } catch {
        /* gone or out of scope */
      }
    }, 100),
  );
}

function drawMap() {
  if (!map || !driverMarkers || !pickupMarkers || !dropoffMarkers) return;
  const seen = new Set<string>();
  for (const d of state.drivers.values()) {
    const at = toLatLng(d.last_location);
    if (!at) continue;
    seen.add(d.id);
    const s = driverState(d);
    driverMarkers.upsert(d.id, at, COLORS[s], `${d.display_name} · ${label(s)}`);
  }
  driverMarkers.retain(seen);
  const active = new Set<string>();
  for (const tr of visibleTrips()) {
    if (!ON_ROAD.includes(tr.status)) continue;
    active.add(tr.id);
    const open = () => void openTrip(tr.id);
    const trouble = TROUBLE.includes(tr.status);
    pickupMarkers.upsert(
      tr.id,
      toLatLng(tr.pickup_location)!,
      trouble ? COLORS.trouble : COLORS.pickup,
      `${trouble ? `${label(tr.status)} · ` : ''}${t('pickup')}: ${tr.pickup_address}`,
      open,
    );
    dropoffMarkers.upsert(
      tr.id,
      toLatLng(tr.dropoff_location)!,
      trouble ? COLORS.trouble : COLORS.dropoff,
      `${trouble ? `${label(tr.status)} · ` : ''}${t('dropoff')}: ${tr.dropoff_address}`,
      open,
    );
  }
  pickupMarkers.retain(active);
  dropoffMarkers.retain(active);
  const el = document.getElementById('map');
  if (el) {
    el.dataset.drivers = String(driverMarkers.size);
    el.dataset.trips = String(active.size);
  }
}

function drawDrivers() {
  const box = document.getElementById('drivers');
  if (!box) return;
  $('#drivers-summary').textContent = `${t('drivers')} (${state.drivers.size})`;
  const rows = [...state.drivers.values()].sort((a, b) => a.display_name.localeCompare(b.display_name));
  clear(
    box,
    h(
      'table',
      null,
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, t('driver')),
          h('th', { scope: 'col' }, t('status')),
          h('th', { scope: 'col' }, t('activeTrips')),
          h('th', { scope: 'col' }, t('gps')),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((d) => {
          const at = toLatLng(d.last_location);
          const stale = (d as DriverGps).location_stale === true;
          // The load explained: which trips (a returning one counts until the goods are back).
          const load = [...state.trips.values()].filter(
            (tr) => tr.driver_id === d.id && ON_ROAD.includes(tr.status) && tr.status !== 'pending',
          );
          return h(
            'tr',
            { 'data-driver-id': d.id, 'data-lat': at?.[0], 'data-lon': at?.[1], 'data-stale': String(stale) },
            h('td', null, d.display_name),
            h('td', null, h('span', { class: 'dot', style: `background:${COLORS[driverState(d)]}` }), label(driverState(d))),
            h(
              'td',
              { class: 'load' },
              `${d.active_trips}/${d.capacity}`,
              load.length
                ? h(
                    'ul',
                    { class: 'load-trips', 'aria-label': t('driverTrips') },
                    load.map((tr) =>
                      h(
                        'li',
                        null,
                        h(
                          'button',
                          { type: 'button', class: 'linkish', 'data-trip-id': tr.id, onclick: () => void openTrip(tr.id) },
                          `${label(tr.status)}: ${tr.dropoff_address}`,
                        ),
                      ),
                    ),
                  )
                : null,
            ),
            h(
              'td',
              { class: stale ? 'gps stale' : 'gps' },
              h('time', { datetime: d.last_location_at ?? undefined, title: fmtTime(d.last_location_at) }, fmtAge(d.last_location_at)),
              stale ? h('span', { class: 'badge danger' }, t('staleGps')) : null,
            ),
          );
        }),
      ),
    ),
  );
}

function filtersForm() {
  const f = state.filter;
  const onChange = (key: keyof State['filter']) => (ev: Event) => {
    f[key] = (ev.target as HTMLInputElement).value;
    schedule();
  };
  return h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': t('filters'), onsubmit: (e: Event) => e.preventDefault() },
    h(
      'label',
      null,
      t('territory'),
      h('select', { id: 'f-territory', onchange: onChange('territory') }, h('option', { value: '' }, t('all'))),
    ),
    h(
      'label',
      null,
      t('merchant'),
      h('select', { id: 'f-merchant', onchange: onChange('merchant') }, h('option', { value: '' }, t('all'))),
    ),
    h(
      'label',
      null,
      t('status'),
      h(
        'select',
        { id: 'f-status', onchange: onChange('status') },
        h('option', { value: '' }, t('all')),
        h('option', { value: 'trouble', selected: f.status === 'trouble' }, t('trouble')),
        STATUS_FILTER.map((s) => h('option', { value: s, selected: f.status === s }, label(s))),
      ),
    ),
    h('label', null, t('search'), h('input', { id: 'f-search', type: 'search', value: f.search, oninput: onChange('search') })),
  );
}

function fillFilterOptions() {
  for (const id of ['plan-start', 'plan-end']) {
    const sel = document.getElementById(id) as HTMLSelectElement | null;
    sel?.append(...state.hubs.map((x) => h('option', { value: x.id }, x.name)));
  }
  const ter = document.getElementById('f-territory') as HTMLSelectElement | null;
  const mer = document.getElementById('f-merchant') as HTMLSelectElement | null;
  ter?.append(...state.territories.map((x) => h('option', { value: x.id, selected: state.filter.territory === x.id }, x.name)));
  mer?.append(...[...state.merchants].map(([id, name]) => h('option', { value: id, selected: state.filter.merchant === id }, name)));
}

function visibleTrips(): Trip[] {
  const f = state.filter;
  const q = f.search.trim().toLowerCase();
  return [...state.trips.values()].filter(
    (tr) =>
      (!f.territory || tr.territory_id === f.territory) &&
      (!f.merchant || tr.merchant_id === f.merchant) &&
      (!f.status || tr.status === f.status || (f.status === 'trouble' && TROUBLE.includes(tr.status))) &&
      (!q ||
        [
          tr.id,
          tr.pickup_address,
          tr.dropoff_address,
          tr.order_id ?? '',
          tr.notes ?? '',
          timing(tr).recipient_name ?? '',
          timing(tr).recipient_phone ?? '',
          label(tr.status),
        ].some((s) => s.toLowerCase().includes(q))),
  );
}

/* ---------------- exceptions lane ---------------- */

const EXCEPTION_KINDS = ['failed', 'returning', 'late', 'stale_gps', 'rejected_again', 'pin_locked'] as const;
type ExceptionKind = (typeof EXCEPTION_KINDS)[number];
interface ExceptionItem {
  kind: ExceptionKind;
  trip: Trip | null;
  driver: Driver | null;
  since: string | null;
}
let exceptionFilter: ExceptionKind | '' = '';
/** Trips rejected again and again: only the server knows (GET /exceptions), re-read when its event arrives. */
let rejectedAgain: string[] = [];
async function loadRejectedAgain() {
  const r = await ok(api.GET('/api/v1/exceptions', { params: { query: { kind: 'rejected_again', limit: 100 } } }));
  rejectedAgain = r.items.map((i) => i.trip_id).filter((id): id is string => !!id);
  for (const i of r.items) if (i.trip) state.trips.set(i.trip.id, i.trip as Trip);
  schedule();
}
/** A driver on duty whose last fix is older than this is "stale" when the server does not say (its setting). */
const STALE_AFTER_S = 600;

/** The trouble the dispatcher must act on, from the trips and drivers the console holds (kept live by the stream). */
function exceptionItems(): ExceptionItem[] {
  const out: ExceptionItem[] = [];
  const now = Date.now();
  for (const tr of state.trips.values()) {
    const driver = tr.driver_id ? (state.drivers.get(tr.driver_id) ?? null) : null;
    if (tr.status === 'failed') out.push({ kind: 'failed', trip: tr, driver, since: tr.failed_at });
    if (tr.status === 'returning') out.push({ kind: 'returning', trip: tr, driver, since: tr.failed_at ?? tr.updated_at });
    if (ACTIVE.includes(tr.status) && (timing(tr).late_by_s ?? 0) > 0)
      out.push({ kind: 'late', trip: tr, driver, since: timing(tr).promised_at ?? null });
    if (ON_ROAD.includes(tr.status) && (tr.pickup_pin_locked || tr.delivery_pin_locked))
      out.push({ kind: 'pin_locked', trip: tr, driver, since: tr.updated_at });
    if (tr.status === 'pending' && rejectedAgain.includes(tr.id))
      out.push({ kind: 'rejected_again', trip: tr, driver, since: tr.updated_at });
  }
  for (const d of state.drivers.values()) {
    const server = (d as DriverGps).location_stale;
    const old =
      d.available && d.active_trips > 0 && (!d.last_location_at || now - new Date(d.last_location_at).getTime() > STALE_AFTER_S * 1000);
    if (server ?? old) out.push({ kind: 'stale_gps', trip: null, driver: d, since: d.last_location_at });
  }
  return out.sort(
    (a, b) => EXCEPTION_KINDS.indexOf(a.kind) - EXCEPTION_KINDS.indexOf(b.kind) || (a.since ?? '').localeCompare(b.since ?? ''),
  );
}

/** A staff action on a trip with its reason, then the trip as the server returns it. */
async function tripAction(id: string, body: Record<string, unknown>) {
  try {
    const next = await ok(api.POST('/api/v1/trips/{id}/status', { params: { path: { id } }, body: body as never }));
    state.trips.set(next.id, next);
    await loadDrivers().catch(() => undefined);
    schedule();
    if (openDetail?.id === next.id) openDetail.update(next);
    toast(t('done'));
  } catch (e) {
    fail(e);
  }
}

/** The actions of a trip in trouble: what the dispatcher can do about it from the lane or the detail. */
function troubleActions(tr: Trip): HTMLElement[] {
  const x = timing(tr);
  const out: HTMLElement[] = [];
  if (['assigned', 'accepted'].includes(tr.status)) {
    out.push(h('button', { type: 'button', class: 'act-reassign', onclick: () => void openTrip(tr.id) }, t('reassign')));
    out.push(
      h(
        'button',
        {
          type: 'button',
          class: 'act-unassign',
          onclick: () => void tripAction(tr.id, { status: 'pending', reason: t('unassignReason') }),
        },
        t('unassign'),
      ),
    );
  }
  if (tr.status === 'returning')
    out.push(
      h(
        'button',
        {
          type: 'button',
          class: 'act-close-return',
          onclick: () => void tripAction(tr.id, { status: 'returned', reason: t('closeReturnReason') }),
        },
        t('closeReturn'),
      ),
    );
  if (ON_ROAD.includes(tr.status) && (tr.pickup_pin_locked || tr.delivery_pin_locked))
    out.push(
      h(
        'button',
        {
          type: 'button',
          class: 'act-reset-pin',
          onclick: () => void tripAction(tr.id, { reset_pin_lock: 'both', reason: t('resetPinReason') }),
        },
        t('resetPin'),
      ),
    );
  if (x.recipient_phone) {
    out.push(h('a', { class: 'act-call button', href: `tel:${x.recipient_phone}` }, t('callRecipient')));
    out.push(h('a', { class: 'act-message button', href: `sms:${x.recipient_phone}` }, t('messageRecipient')));
  }
  return out;
}

function drawExceptions() {
  const counts = document.getElementById('exc-counts');
  const list = document.getElementById('exc-list');
  if (!counts || !list) return;
  const items = exceptionItems();
  const n = (k: ExceptionKind) => items.filter((i) => i.kind === k).length;
  clear(
    counts,
    EXCEPTION_KINDS.map((k) =>
      h(
        'button',
        {
          type: 'button',
          class: `chip${n(k) ? ' alert' : ''}`,
          'data-kind': k,
          'data-count': String(n(k)),
          'aria-pressed': String(exceptionFilter === k),
          onclick: () => {
            exceptionFilter = exceptionFilter === k ? '' : k;
            schedule();
          },
        },
        `${t(`exc_${k}`)} `,
        h('span', { class: 'count' }, String(n(k))),
      ),
    ),
  );
  const shown = items.filter((i) => !exceptionFilter || i.kind === exceptionFilter);
  clear(
    list,
    shown
      .slice(0, 50)
      .map((i) =>
        h(
          'li',
          { 'data-kind': i.kind, 'data-trip-id': i.trip?.id, 'data-driver-id': i.driver?.id },
          h('span', { class: 'badge danger' }, t(`exc_${i.kind}`)),
          ' ',
          i.trip
            ? h('button', { type: 'button', class: 'linkish', onclick: () => void openTrip(i.trip!.id) }, i.trip.dropoff_address)
            : h('span', null, i.driver?.display_name ?? ''),
          h(
            'span',
            { class: 'meta' },
            [
              i.trip && i.driver ? i.driver.display_name : null,
              i.kind === 'late' && i.trip ? fmtLate(timing(i.trip).late_by_s) : null,
              i.kind === 'stale_gps' ? `${t('gps')} ${fmtAge(i.since)}` : i.since ? fmtAge(i.since) : null,
            ]
              .filter(Boolean)
              .join(' · '),
          ),
          i.trip ? h('span', { class: 'exc-actions' }, troubleActions(i.trip)) : null,
        ),
      ),
  );
}

function drawBoard() {
  const board = document.getElementById('board');
  if (!board) return;
  const groups = new Map<string, Trip[]>(COLUMNS.map((c) => [c.id, []]));
  const columnOf = new Map(COLUMNS.flatMap((c) => c.statuses.map((s) => [s, c.id] as const)));
  for (const tr of visibleTrips()) groups.get(columnOf.get(tr.status) ?? '')?.push(tr);
  const f = state.filter.status;
  const cols = COLUMNS.filter((c) => !f || c.id === f || c.statuses.includes(f as TripStatus));
  const scrollLeft = board.scrollLeft;
  clear(
    board,
    cols.map((c) => {
      const list = groups.get(c.id)!.sort((a, b) => b.created_at.localeCompare(a.created_at));
      const title = c.id === 'trouble' ? t('trouble') : label(c.id);
      return h(
        'section',
        {
          class: `column${c.id === 'trouble' && list.length ? ' trouble' : ''}`,
          'data-status': c.id,
          'aria-labelledby': `col-${c.id}`,
          tabindex: '-1',
        },
        h('h3', { id: `col-${c.id}` }, `${title} `, h('span', { class: 'count' }, String(list.length))),
        h('ul', null, list.slice(0, CARDS_PER_COLUMN).map(card)),
        list.length > CARDS_PER_COLUMN ? h('p', { class: 'more' }, `+${list.length - CARDS_PER_COLUMN}`) : null,
      );
    }),
  );
  board.scrollLeft = scrollLeft;
  // Every column is one click away, with its count, whatever the width: the hint that the board scrolls.
  const nav = document.getElementById('col-nav');
  if (nav)
    clear(
      nav,
      h('span', { class: 'hint', id: 'board-hint' }, t('boardHint')),
      cols.map((c) =>
        h(
          'button',
          {
            type: 'button',
            class: `chip${c.id === 'trouble' && groups.get(c.id)!.length ? ' alert' : ''}`,
            'data-col': c.id,
            onclick: () => {
              const col = board.querySelector<HTMLElement>(`.column[data-status="${c.id}"]`);
              col?.scrollIntoView({ inline: 'nearest', block: 'nearest' });
              col?.focus({ preventScroll: true });
            },
          },
          `${c.id === 'trouble' ? t('trouble') : label(c.id)} `,
          h('span', { class: 'count' }, String(groups.get(c.id)!.length)),
        ),
      ),
    );
  const n = state.selected.size;
  const btn = document.getElementById('optimize') as HTMLButtonElement | null;
  if (btn) btn.disabled = n === 0;
  const sel = document.getElementById('selection');
  if (sel) sel.textContent = n ? count(n, 'selectedOne', 'selectedMany') : '';
}

function card(tr: Trip) {
  const driver = tr.driver_id ? (state.drivers.get(tr.driver_id)?.display_name ?? tr.driver_id.slice(-6)) : null;
  const merchant = tr.merchant_id ? state.merchants.get(tr.merchant_id) : null;
  const x = timing(tr);
  const late = (x.late_by_s ?? 0) > 60;
  const timingLine = [
    x.eta_dropoff_at && ON_ROAD.includes(tr.status) ? `${t('eta')} ${fmtClock(x.eta_dropoff_at)}` : null,
    x.promised_at ? `${t('promise')} ${fmtClock(x.promised_at)}` : null,
  ].filter(Boolean);
  return h(
    'li',
    { class: `card${late ? ' late' : ''}`, 'data-trip-id': tr.id, 'data-status': tr.status },
    tr.status === 'pending'
      ? h('input', {
          type: 'checkbox',
          class: 'pick',
          'aria-label': `${t('select')} ${tr.dropoff_address}`,
          checked: state.selected.has(tr.id),
          onchange: (e: Event) => {
            if ((e.target as HTMLInputElement).checked) state.selected.add(tr.id);
            else state.selected.delete(tr.id);
            schedule();
          },
        })
      : null,
    h(
      'button',
      { type: 'button', class: 'open', onclick: () => void openTrip(tr.id) },
      TROUBLE.includes(tr.status)
        ? h(
            'span',
            { class: `badge s-${tr.status}` },
            [label(tr.status), tr.failure_reason ? label(tr.failure_reason) : null].filter(Boolean).join(' · '),
          )
        : null,
      h('span', { class: 'addr' }, tr.dropoff_address),
      x.recipient_name || x.recipient_phone
        ? h('span', { class: 'meta recipient' }, `${t('recipient')}: ${[x.recipient_name, x.recipient_phone].filter(Boolean).join(' · ')}`)
        : null,
      h('span', { class: 'meta' }, [merchant, driver, tr.order_id].filter(Boolean).join(' · ') || `#${tr.id.slice(-6)}`),
      timingLine.length || x.late_by_s !== undefined
        ? h(
            'span',
            { class: 'meta timing' },
            timingLine.join(' · '),
            x.late_by_s !== null && x.late_by_s !== undefined
              ? h('span', { class: late ? 'late-by' : 'on-time' }, ` · ${fmtLate(x.late_by_s)}`)
              : null,
          )
        : null,
    ),
  );
}

/* ---------------- trip detail ---------------- */

async function openTrip(id: string) {
  const dlg = document.getElementById('detail') as HTMLDialogElement | null;
  if (!dlg) return;
  let trip: Trip;
  try {
    trip = await ok(api.GET('/api/v1/trips/{id}', { params: { path: { id } } }));
  } catch (e) {
    return fail(e);
  }
  state.trips.set(trip.id, trip);
  const path = { params: { path: { id } } };
  const statusEl = h('span', { class: `status s-${trip.status}`, id: 'detail-status' });
  const factsBox = h('dl', { id: 'detail-facts' });
  const timelineBox = h('ol', { class: 'timeline', id: 'detail-timeline' });
  const candidatesBox = h('div', { id: 'candidates' });
  const trackingBox = h('div', { id: 'tracking', 'aria-live': 'polite' });
  const proofsBox = h('div', { id: 'proofs' });
  const linkBox = h('div', { id: 'recipient-link' });
  const actionsBox = h('div', { class: 'actions', id: 'detail-actions' });
  const closeBtn = h('button', { type: 'button', id: 'close-detail', onclick: () => dlg.close() }, t('close'));
  // The heading takes the focus when the dialog opens: Enter must not press the first action (auto-assign).
  const title = h('h2', { id: 'detail-title', tabindex: '-1', autofocus: true }, `${t('trip')} #${trip.id.slice(-6)} · `, statusEl);
  const after = async (p: Promise<Trip>) => {
    try {
      const next = await p;
      state.trips.set(next.id, next);
      state.selected.delete(next.id);
      await loadDrivers().catch(() => undefined);
      schedule();
      dlg.close();
    } catch (e) {
      fail(e);
    }
  };
  const cancelForm = h(
    'form',
    { class: 'cancel', method: 'dialog' },
    h('label', { for: 'cancel-reason' }, t('cancelReason')),
    h('input', { id: 'cancel-reason', required: true, maxlength: '500' }),
    h('button', { type: 'submit', class: 'danger' }, t('cancel')),
  );
  cancelForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const reason = ($('#cancel-reason', cancelForm) as HTMLInputElement).value;
    void after(ok(api.POST('/api/v1/trips/{id}/status', { ...path, body: { status: 'cancelled', reason } })));
  });
  const refreshTracking = () =>
    void ok(api.GET('/api/v1/trips/{id}/tracking', path)).then(
      (tr) => {
        const x = timing(state.trips.get(id) ?? trip);
        clear(
          trackingBox,
          h(
            'p',
            null,
            x.eta_dropoff_at !== undefined
              ? `${t('eta')} (${t('dropoff').toLowerCase()}): ${fmtClock(x.eta_dropoff_at)}`
              : `${t('eta')}: ${fmtEta(tr.eta_seconds)}`,
            ` · ${t('distance')}: ${fmtKm(tr.distance_remaining_m)} · ${t('gps')}: ${fmtAge(tr.last_location_at)}`,
          ),
        );
      },
      () => clear(trackingBox, '—'),
    );
  let shownStatus: TripStatus | null = null;
  const update = (tr: Trip) => {
    trip = tr;
    const x = timing(tr);
    statusEl.className = `status s-${tr.status}`;
    statusEl.textContent = label(tr.status);
    const driver = tr.driver_id ? (state.drivers.get(tr.driver_id)?.display_name ?? tr.driver_id) : t('none');
    clear(
      factsBox,
      [
        [t('pickup'), tr.pickup_address],
        [t('dropoff'), tr.dropoff_address],
        x.recipient_name || x.recipient_phone ? [t('recipient'), [x.recipient_name, x.recipient_phone].filter(Boolean).join(' · ')] : null,
        [t('driver'), driver],
        x.promised_at !== undefined
          ? [
              t('promise'),
              x.promised_at
                ? `${fmtTime(x.promised_at)}${x.late_by_s !== null && x.late_by_s !== undefined ? ` · ${fmtLate(x.late_by_s)}` : ''}`
                : '—',
            ]
          : null,
        tr.pickup_after || tr.pickup_before ? [t('pickupWindow'), fmtWindow(tr.pickup_after, tr.pickup_before)] : null,
        tr.deliver_after || tr.deliver_before ? [t('deliveryWindow'), fmtWindow(tr.deliver_after, tr.deliver_before)] : null,
        [t('load'), fmtLoad(tr.units, tr.weight_kg, tr.volume_l)],
        tr.service_min !== null ? [t('serviceMin'), `${tr.service_min} min`] : null,
        tr.failure_reason ? [t('reason'), [label(tr.failure_reason), tr.failure_note].filter(Boolean).join(' · ')] : null,
        [t('fee'), `${tr.delivery_fee} ${tr.currency}`],
      ]
        .filter((r): r is [string, string] => !!r)
        .flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
    );
    const times: [string, string | null][] = [
      [t('created'), tr.created_at],
      [label('assigned'), tr.assigned_at],
      [label('accepted'), tr.accepted_at],
      [label('picked_up'), tr.picked_up_at],
      [label('in_transit'), tr.in_transit_at],
      [label('completed'), tr.completed_at],
      [label('cancelled'), tr.cancelled_at],
      [label('failed'), tr.failed_at],
      [label('returned'), tr.returned_at],
    ];
    clear(
      timelineBox,
      times.filter(([, at]) => at).map(([k, at]) => h('li', null, h('time', { datetime: at! }, fmtTime(at)), ' ', k)),
    );
    refreshTracking();
    if (shownStatus === tr.status) return;
    // The actions depend on the status: redrawn when it changes (focus kept in the dialog).
    shownStatus = tr.status;
    const hadFocus = dlg.contains(document.activeElement) && !title.contains(document.activeElement) && document.activeElement !== closeBtn;
    const terminal = ['completed', 'cancelled', 'returned', 'failed', 'returning'].includes(tr.status);
    clear(
      actionsBox,
      tr.status === 'pending'
        ? h(
            'button',
            { type: 'button', id: 'auto-assign', onclick: () => void after(ok(api.POST('/api/v1/trips/{id}/auto-assign', path))) },
            t('autoAssign'),
          )
        : null,
      troubleActions(tr).filter((b) => !b.classList.contains('act-reassign')),
      closeBtn,
    );
    cancelForm.hidden = terminal;
    candidatesBox.hidden = candidatesTitle.hidden = !(tr.status === 'pending' || tr.status === 'assigned');
    if (!candidatesBox.hidden) loadCandidates();
    loadLink();
    if (hadFocus && !dlg.contains(document.activeElement)) title.focus();
  };
  const candidatesTitle = h('h3', null, t('candidates'));
  const loadCandidates = () =>
    void ok(api.GET('/api/v1/trips/{id}/candidates', { params: { path: { id }, query: { limit: 20 } } })).then(
      (r) =>
        clear(
          candidatesBox,
          r.data.length
            ? h(
                'table',
                null,
                h(
                  'thead',
                  null,
                  h(
                    'tr',
                    null,
                    h('th', { scope: 'col' }, t('driver')),
                    h('th', { scope: 'col' }, t('distance')),
                    h('th', { scope: 'col' }, t('activeTrips')),
                    h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, t('assign'))),
                  ),
                ),
                h(
                  'tbody',
                  null,
                  r.data.map((c) =>
                    h(
                      'tr',
                      { 'data-driver-id': c.driver.id },
                      h('td', null, c.driver.display_name),
                      h('td', null, fmtKm(c.distance_m)),
                      h('td', null, `${c.active_trips}/${c.capacity}`),
                      h(
                        'td',
                        null,
                        c.eligible
                          ? h(
                              'button',
                              {
                                type: 'button',
                                class: 'assign',
                                onclick: () =>
                                  void after(ok(api.POST('/api/v1/trips/{id}/assign', { ...path, body: { driver_id: c.driver.id } }))),
                              },
                              t('assign'),
                            )
                          : h('span', { class: 'not-eligible' }, `${t('notEligible')}: ${c.reasons.map(label).join(', ')}`),
                      ),
                    ),
                  ),
                ),
              )
            : t('none'),
        ),
      () => clear(candidatesBox, '—'),
    );
  // Issuing a link where one exists replaces it: the dispatcher is told first that the old one stops working.
  const showLink = (url: string | null) => {
    const token = url?.split('/').pop();
    const ended = ['completed', 'cancelled', 'returned', 'failed', 'returning'].includes(trip.status);
    const issue = () =>
      // reissue only after the dispatcher confirmed: without it the server keeps (and returns) the live link.
      void ok(api.POST('/api/v1/trips/{id}/recipient-link', { ...path, body: { reissue: !!token } })).then((l) => {
        if (token) toast(t('linkReissued'));
        showLink(l.url);
      }, fail);
    const confirmBox = h(
      'div',
      { class: 'confirm', id: 'reissue-confirm', role: 'alertdialog', 'aria-labelledby': 'reissue-warn', hidden: true },
      h('p', { id: 'reissue-warn' }, t('reissueWarn')),
      h('button', { type: 'button', class: 'danger', id: 'reissue-yes', onclick: issue }, t('reissueConfirm')),
      h(
        'button',
        {
          type: 'button',
          id: 'reissue-no',
          onclick: () => {
            confirmBox.hidden = true;
            ($('#issue-link', linkBox) as HTMLButtonElement).focus();
          },
        },
        t('keepLink'),
      ),
    );
    clear(
      linkBox,
      token
        ? h('a', { href: `/track/${token}`, target: '_blank', rel: 'noopener', id: 'track-link' }, `/track/${token.slice(0, 8)}…`)
        : null,
      ended
        ? null
        : h(
            'button',
            {
              type: 'button',
              id: 'issue-link',
              onclick: () => {
                if (!token) return issue();
                confirmBox.hidden = false;
                ($('#reissue-no', confirmBox) as HTMLButtonElement).focus();
              },
            },
            token ? t('reissueLink') : t('issueLink'),
          ),
      confirmBox,
    );
  };
  const loadLink = () =>
    void ok(api.GET('/api/v1/trips/{id}/recipient-link', path)).then(
      (l) => showLink(l.revoked_at ? null : l.url),
      () => showLink(null),
    );
  clear(
    dlg,
    h(
      'div',
      { class: 'detail' },
      title,
      factsBox,
      h('h3', null, t('timeline')),
      timelineBox,
      h('h3', null, t('tracking')),
      trackingBox,
      h('h3', null, t('proofs')),
      proofsBox,
      h('h3', null, t('recipientLink')),
      linkBox,
      candidatesTitle,
      candidatesBox,
      actionsBox,
      cancelForm,
    ),
  );
  update(trip);
  openDetail = { id, update, refreshTracking };
  dlg.addEventListener('close', () => openDetail?.id === id && (openDetail = null), { once: true });
  if (!dlg.open) dlg.showModal();
  void ok(api.GET('/api/v1/trips/{id}/proofs', path)).then(
    (r) =>
      clear(
        proofsBox,
        r.data.length
          ? h(
              'ul',
              null,
              r.data.map((p) =>
                h(
                  'li',
                  null,
                  [
                    label(p.stage === 'delivery' ? 'dropoff' : 'pickup'),
                    fmtTime(p.created_at),
                    p.pin_verified ? 'PIN ✓' : null,
                    p.evidence ? p.evidence.type : null,
                  ]
                    .filter(Boolean)
                    .join(' · '),
                ),
              ),
            )
          : t('noProofs'),
      ),
    () => clear(proofsBox, '—'),
  );
}

/* ---------------- optimized dispatch ---------------- */

async function optimize() {
  const ids = [...state.selected];
  if (!ids.length) return;
  const btn = document.getElementById('optimize') as HTMLButtonElement;
  btn.disabled = true;
  try {
    const start = (document.getElementById('plan-start') as HTMLSelectElement | null)?.value;
    const end = (document.getElementById('plan-end') as HTMLSelectElement | null)?.value;
    const body = {
      trip_ids: ids,
      seed: 1,
      time_budget_ms: 1000,
      ...(start ? { start: { hub_id: start } } : {}),
      ...(end ? { end: { hub_id: end } } : {}),
    };
    state.plan = isSubadmin()
      ? await ok(api.POST('/api/v1/subadmin/dispatch-batches/optimize', { body }))
      : await ok(api.POST('/api/v1/admin/dispatch-batches/optimize', { body }));
    drawPlan();
  } catch (e) {
    fail(e);
  } finally {
    btn.disabled = state.selected.size === 0;
  }
}

function drawPlan() {
  const box = document.getElementById('plan');
  planLayer?.clearLayers();
  const plan = state.plan;
  if (!box) return;
  if (!plan) {
    box.hidden = true;
    clear(box);
    return;
  }
  box.hidden = false;
  plan.routes.forEach((r, i) => {
    const color = ROUTE_COLORS[i % ROUTE_COLORS.length]!;
    const start = toLatLng(r.start_hub?.position ?? state.drivers.get(r.driver_id)?.last_location);
    const pts = [start, ...r.stops.map((s) => toLatLng(s.position)), toLatLng(r.end_hub?.position)].filter((p): p is L.LatLngTuple => !!p);
    if (planLayer) {
      L.polyline(pts, { color, weight: 4, opacity: 0.85 }).addTo(planLayer);
      r.stops.forEach((s, k) =>
        L.circleMarker(toLatLng(s.position)!, { radius: 7, color, fillColor: '#fff', fillOpacity: 1 })
          .bindTooltip(`${k + 1}. ${label(s.kind)} · ${fmtEta(s.arrival_offset_s)}`)
          .addTo(planLayer!),
      );
    }
  });
  const commit = async () => {
    try {
      const done = isSubadmin()
        ? await ok(api.POST('/api/v1/subadmin/dispatch-batches/optimize/{planId}/commit', { params: { path: { planId: plan.plan_id } } }))
        : await ok(api.POST('/api/v1/admin/dispatch-batches/optimize/{planId}/commit', { params: { path: { planId: plan.plan_id } } }));
      toast(`${t('plan')}: ${count(done.totals.assigned, 'assignedOne', 'assignedMany')}`);
      for (const a of done.assignments) state.selected.delete(a.trip_id);
      state.plan = null;
      drawPlan();
      await Promise.all([loadTrips(), loadDrivers()]);
      schedule();
    } catch (e) {
      fail(e);
    }
  };
  // A stop is named by its address, as the cards are (the id only when the trip is not loaded).
  const where = (tripId: string, kind: string) => {
    const tr = state.trips.get(tripId);
    return tr ? (kind === 'pickup' ? tr.pickup_address : tr.dropoff_address) : `#${tripId.slice(-6)}`;
  };
  clear(
    box,
    // The decision first: the plan's totals and its buttons on top (sticky), the routes below.
    h(
      'div',
      { class: 'plan-head' },
      h(
        'h3',
        null,
        t('plan'),
        ' ',
        h('span', { class: 'count' }, `${plan.totals.assigned} / ${plan.totals.assigned + plan.totals.unassigned}`),
      ),
      h(
        'button',
        {
          type: 'button',
          id: 'commit-plan',
          class: 'primary',
          disabled: plan.status !== 'proposed' || plan.assignments.length === 0,
          onclick: () => void commit(),
        },
        t('commit'),
      ),
      h(
        'button',
        {
          type: 'button',
          id: 'discard-plan',
          onclick: () => {
            state.plan = null;
            drawPlan();
          },
        },
        t('discard'),
      ),
    ),
    h(
      'ol',
      { class: 'routes' },
      plan.routes.map((r, i) =>
        h(
          'li',
          { 'data-driver-id': r.driver_id },
          h('span', { class: 'dot', style: `background:${ROUTE_COLORS[i % ROUTE_COLORS.length]}` }),
          `${state.drivers.get(r.driver_id)?.display_name ?? r.driver_id}: ${r.stops.length} ${t('stops')}, ${fmtKm(r.distance_m)}, ${fmtEta(r.duration_s)}`,
          h(
            'ol',
            { class: 'stops' },
            r.stops.map((s) =>
              h(
                'li',
                { 'data-trip-id': s.trip_id },
                `${label(s.kind)}: ${where(s.trip_id, s.kind)} · ${t('eta')} ${fmtEta(s.arrival_offset_s)} · ${t('load')} ${fmtLoad(s.load_after, s.weight_kg_after ?? null, s.volume_l_after ?? null)}`,
              ),
            ),
          ),
          r.start_hub || r.end_hub
            ? h(
                'p',
                { class: 'route-hubs' },
                [
                  r.start_hub ? tf('fromHub', { hub: r.start_hub.name, time: fmtEta(r.start_hub.departure_offset_s) }) : '',
                  r.end_hub ? tf('toHub', { hub: r.end_hub.name, time: fmtEta(r.end_hub.arrival_offset_s) }) : '',
                ]
                  .filter(Boolean)
                  .join(' · '),
              )
            : null,
        ),
      ),
    ),
    plan.unassigned.length
      ? h('p', null, `${t('unassigned')}: `, plan.unassigned.map((u) => `${where(u.trip_id, 'dropoff')} (${label(u.reason)})`).join(', '))
      : null,
  );
}

/* ---------------- approvals ---------------- */

async function renderApprovals(main: HTMLElement) {
  const section = (id: string, title: string) =>
    h(
      'section',
      { class: 'queue', id, 'aria-labelledby': `${id}-title` },
      h('h2', { id: `${id}-title` }, title),
      h('div', { class: 'body' }, '…'),
    );
  const drivers = section('q-drivers', t('drivers'));
  const merchants = section('q-merchants', t('merchants'));
  const documents = section('q-documents', t('documents'));
  const reviews = section('q-reviews', t('paymentReviews'));
  const seesReviews = isAdmin() || isSubadmin();
  // Who may decide (the API's rules): drivers and merchants by administrators and sub-administrators (with the
  // permission), documents by administrators. Others see the queues without buttons they could not use.
  const decides = { drivers: isAdmin() || isSubadmin(), merchants: isAdmin() || isSubadmin(), documents: isAdmin() };
  clear(main, h('div', { class: 'approvals' }, drivers, merchants, documents, seesReviews ? reviews : null));
  const notes: Record<string, string> = {
    'q-drivers': t('adminDecides'),
    'q-merchants': t('adminDecides'),
    'q-documents': t('adminDecidesDocs'),
  };
  const fill = (sec: HTMLElement, may: boolean, rows: { id: string; text: string; actions: [string, () => Promise<unknown>][] }[]) =>
    clear(
      $('.body', sec),
      rows.length && !may && notes[sec.id] ? h('p', { class: 'muted note' }, notes[sec.id]) : null,
      rows.length
        ? h(
            'ul',
            null,
            rows.map((r) =>
              h(
                'li',
                { 'data-id': r.id },
                h('span', null, r.text),
                may
                  ? r.actions.map(([text, act]) =>
                      h('button', { type: 'button', onclick: () => void act().then(() => renderApprovals(main), fail) }, text),
                    )
                  : null,
              ),
            ),
          )
        : h('p', null, t('nothingPending')),
    );
  const guard = (sec: HTMLElement) => (e: unknown) => clear($('.body', sec), h('p', { class: 'error' }, errorText(e)));
  void ok(api.GET('/api/v1/drivers', { params: { query: { status: 'pending', limit: 100 } } })).then(
    (r) =>
      fill(
        drivers,
        decides.drivers,
        r.data.map((d) => ({
          id: d.id,
          text: `${d.display_name} · ${label(d.vehicle_type)}`,
          actions: [
            [t('approve'), () => ok(api.POST('/api/v1/drivers/{id}/approve', { params: { path: { id: d.id } }, body: {} }))],
            [t('reject'), () => ok(api.POST('/api/v1/drivers/{id}/reject', { params: { path: { id: d.id } }, body: {} }))],
          ],
        })),
      ),
    guard(drivers),
  );
  void ok(api.GET('/api/v1/merchants', { params: { query: { status: 'pending', limit: 100 } } })).then(
    (r) =>
      fill(
        merchants,
        decides.merchants,
        r.data.map((m) => ({
          id: m.id,
          text: `${m.name} · ${m.address}`,
          actions: [
            [t('approve'), () => ok(api.POST('/api/v1/merchants/{id}/approve', { params: { path: { id: m.id } }, body: {} }))],
            [t('reject'), () => ok(api.POST('/api/v1/merchants/{id}/reject', { params: { path: { id: m.id } }, body: {} }))],
          ],
        })),
      ),
    guard(merchants),
  );
  void ok(api.GET('/api/v1/documents', { params: { query: { status: 'pending', limit: 100 } } })).then(
    (r) =>
      fill(
        documents,
        decides.documents,
        r.data.map((d) => ({
          id: d.id,
          text: `${d.title} · ${label(d.subject_type)} · ${fmtTime(d.created_at)}`,
          actions: [
            [
              t('approve'),
              () => ok(api.POST('/api/v1/documents/{id}/review', { params: { path: { id: d.id } }, body: { decision: 'approved' } })),
            ],
            [
              t('reject'),
              () => ok(api.POST('/api/v1/documents/{id}/review', { params: { path: { id: d.id } }, body: { decision: 'rejected' } })),
            ],
          ],
        })),
      ),
    guard(documents),
  );
  // Payment reviews are decided by the merchant who receives the payment (POST /merchant/payment-reviews/:id/approve);
  // staff see the queue to follow it up.
  const reviewList = !seesReviews
    ? Promise.resolve([])
    : isSubadmin()
      ? ok(api.GET('/api/v1/subadmin/payments/review', {})).then(
          (r) => (r as { data: { id: string; amount: string; currency: string; submitted_at?: string | null }[] }).data,
        )
      : ok(api.GET('/api/v1/admin/payment-reviews', { params: { query: { status: 'pending', limit: 100 } } })).then((r) => r.data);
  if (seesReviews)
    void reviewList.then(
      (rows) =>
        fill(
          reviews,
          false,
          rows.map((p) => ({ id: p.id, text: `${p.amount} ${p.currency} · ${fmtTime(p.submitted_at ?? null)}`, actions: [] })),
        ),
      guard(reviews),
    );
}

/* ---------------- settings ---------------- */

type Flat = Record<string, string | number | boolean | null>;

/**
 * A settings form. A change is what differs from the values last saved (not the values first loaded: putting a
 * setting back to where it was is a change too). Settings with a closed list of values are selects.
 */
function settingsForm(
  id: string,
  title: string,
  loaded: Flat,
  save: ((patch: Flat) => Promise<Flat>) | null,
  opts: { hide?: string[]; unit?: Record<string, string> } = {},
) {
  const fields = Object.entries(loaded).filter(
    ([k, v]) => k !== 'updated_at' && k !== 'organization_id' && !opts.hide?.includes(k) && (v === null || typeof v !== 'object'),
  );
  let saved: Flat = { ...loaded };
  const form = h(
    'form',
    { class: 'settings', id, 'aria-labelledby': `${id}-title` },
    h('h2', { id: `${id}-title` }, title),
    h(
      'fieldset',
      { disabled: !save },
      h('legend', { class: 'sr-only' }, title),
      fields.map(([k, v]) => {
        const fid = `${id}-${k}`;
        const choices = choicesOf(k);
        const input = choices
          ? h(
              'select',
              { id: fid, name: k },
              choices.some((c) => c.value === v) ? null : h('option', { value: String(v ?? ''), selected: true }, String(v ?? '')),
              choices.map((c) => h('option', { value: c.value, selected: c.value === v }, c.text)),
            )
          : typeof v === 'boolean'
            ? h('input', { id: fid, name: k, type: 'checkbox', checked: v })
            : h('input', {
                id: fid,
                name: k,
                type: typeof v === 'number' ? 'number' : 'text',
                value: v ?? '',
                step: typeof v === 'number' ? 'any' : undefined,
              });
        const unit = opts.unit?.[k];
        return h('div', { class: 'field' }, h('label', { for: fid }, unit ? `${label(k)} (${unit})` : label(k)), input);
      }),
    ),
    save ? h('button', { type: 'submit', class: 'primary' }, t('save')) : null,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!save) return;
    const patch: Flat = {};
    for (const [k, v] of fields) {
      const el = form.elements.namedItem(k) as HTMLInputElement | HTMLSelectElement;
      const next =
        typeof v === 'boolean'
          ? (el as HTMLInputElement).checked
          : typeof v === 'number'
            ? Number(el.value)
            : el.value === '' && v === null
              ? null
              : el.value;
      if (next !== saved[k]) patch[k] = next;
    }
    if (!Object.keys(patch).length) return toast(t('nothingToSave'));
    save(patch).then((after) => {
      saved = { ...saved, ...patch, ...after };
      toast(t('saved'));
    }, fail);
  });
  return form;
}

async function renderSettings(main: HTMLElement) {
  clear(main, h('div', { class: 'settings-page' }, h('p', null, '…')));
  const box = $('.settings-page', main);
  // Organization settings: administrators only; logistics settings: read by dispatch and sub-administrators, changed by administrators.
  const admin = isAdmin();
  const [org, logistics, secrets] = await Promise.all([
    admin ? ok(api.GET('/api/v1/settings', {})).catch(() => null) : null,
    ok(api.GET('/api/v1/logistics/settings', {})).catch(() => null),
    // The write-only secrets (a merchant's chat token, a webhook's signing secret): the organization's administrators.
    session.user()?.kind === 'administrator' ? secretForms() : null,
  ]);
  // The currency is the organization's (one setting): the logistics amounts show it as their unit, not as a second field.
  const currency = logistics?.currency ?? '';
  clear(
    box,
    org
      ? settingsForm(
          's-org',
          t('organization'),
          org as unknown as Flat,
          async (patch) => (await ok(api.PATCH('/api/v1/settings', { body: patch as never }))) as unknown as Flat,
        )
      : null,
    logistics
      ? settingsForm(
          's-logistics',
          t('logistics'),
          logistics as unknown as Flat,
          admin ? async (patch) => (await ok(api.PATCH('/api/v1/logistics/settings', { body: patch as never }))) as unknown as Flat : null,
          { hide: ['currency'], unit: { default_delivery_fee: currency, driver_flat_fee: currency } },
        )
      : null,
    secrets,
  );
}

/* ---------------- start ---------------- */

if (session.user()) renderShell();
else renderLogin();
