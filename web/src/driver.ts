import './style.css';
import './driver.css';
import { api, authorizedFetch, keepSessionIn, login, logout, ok, session, type Schemas, type Trip } from './api';
import { $, clear, h } from './dom';
import { count, fmtKm, fmtTime, getLang, label, setLang, t, tf, type Lang } from './i18n';
import { clientId, OfflineQueue, OfflineStore, type OpResult, type QueuedOp, type StoredBlob } from './offline-queue';
import { batteryLow, installPrompt, onNetwork, registerServiceWorker, resizeImage, screenWakeLock } from './pwa';
import { openStream, type StreamEvent } from './sse';
import { haversine, keepFix } from './driver-gps';

/**
 * The driver app at /driver/: an installable, offline-first page for the driver's day. Everything the driver does
 * to a trip goes through one durable queue (IndexedDB) and reaches the server as /mobile/sync/push operations with
 * their client_operation_id, at once when there is a network, later when there is none; the page shows the trip as
 * the driver left it meanwhile. GPS points wait in IndexedDB and go in batches. Data comes from the sync pull
 * (its cursor kept) and the driver routes, and is kept for the next offline start.
 */

keepSessionIn(localStorage, 'driver.session');

type Me = Schemas['Driver'] & { geofence_radius_m: number; acceptance_timeout_s: number };
type Notification = Schemas['Notification'];
type Earnings = {
  currency: string;
  completed_trips: number;
  total_earnings: string;
  data: { trip_id: string; status: string; completed_at: string; driver_earning: string }[];
};
type Settlement = Schemas['DriverSettlement'];
/** GET /driver/cash: the cash the driver carries (cash on delivery), his limit and the latest entries. */
type Cash = {
  cash_in_hand: string;
  cash_limit: string | null;
  at_cash_limit: boolean;
  currency: string;
  data: Schemas['DriverCashEntry'][];
};
type Tab = 'today' | 'route' | 'inbox' | 'earnings';
/** A message to the driver; its text is made when shown, so it follows a change of language. */
type Note = { kind: 'ok' | 'warn' | 'error'; text: () => string };

const ACTIVE = new Set(['accepted', 'picked_up', 'in_transit', 'returning']);
/** Where each queued action leaves the trip, until the server answers. */
const AFTER: Record<string, string> = {
  'trip.accept': 'accepted',
  'trip.verify_pickup': 'picked_up',
  'trip.start_delivery': 'in_transit',
  'trip.verify_delivery': 'completed',
  'trip.fail_delivery': 'returning',
  'trip.return': 'returned',
  'trip.reject': 'rejected',
};

const store = new OfflineStore('driver');
const queue = new OfflineQueue(store);
/** The screen stays on during an active trip; `data-wake-lock` on the body says whether the lock is held. */
const wake = screenWakeLock((held) => (document.body.dataset.wakeLock = held ? 'held' : 'released'));
const root = $('#app');

const state = {
  me: null as Me | null,
  trips: new Map<string, Trip>(),
  notifications: [] as Notification[],
  earnings: null as Earnings | null,
  settlements: [] as Settlement[],
  cash: null as Cash | null,
  pending: [] as QueuedOp[],
  notes: [] as Note[],
  online: navigator.onLine,
  tab: 'today' as Tab,
  gps: 'off' as 'off' | 'ok' | 'denied' | 'stale' | 'unsupported',
  seenOffers: new Set<string>(),
  install: null as null | (() => Promise<void>),
  sessionLost: false,
  /** The event stream is open: offers and changes arrive at once (the poll is then only a safety net). */
  live: false,
};

// ---------- helpers ----------

const tripLabel = (tr: Trip) => tr.dropoff_address || tr.id.slice(0, 8);
const money = (amount: string | null | undefined, currency = state.me ? '' : '') =>
  amount ? `${amount}${currency ? ` ${currency}` : ''}` : '—';
const cashToCollect = (tr: Trip): string | null => {
  const c = (tr as Trip & { cash_to_collect?: string | null }).cash_to_collect ?? null;
  return c && Number(c) > 0 ? c : null;
};
/** Sums money strings ("12.50", "-3.00") exactly, in cents: no floats. */
function sumMoney(amounts: string[]): string {
  let c = 0n;
  for (const a of amounts) {
    const m = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(a.trim());
    if (!m) continue;
    const v = BigInt(m[2]!) * 100n + BigInt((m[3] ?? '').padEnd(2, '0'));
    c += m[1] ? -v : v;
  }
  const neg = c < 0n;
  if (neg) c = -c;
  return `${neg ? '-' : ''}${c / 100n}.${String(c % 100n).padStart(2, '0')}`;
}
const latlon = (p: { coordinates: number[] }) => ({ lon: p.coordinates[0]!, lat: p.coordinates[1]! });

/** The trip as the driver sees it: the server's state with the queued actions applied. */
function view(tr: Trip): Trip {
  let status = tr.status as string;
  for (const op of state.pending) if (op.payload.trip_id === tr.id && AFTER[op.type]) status = AFTER[op.type]!;
  return status === tr.status ? tr : ({ ...tr, status } as Trip);
}
const trips = () => [...state.trips.values()].map(view);
const isToday = (iso: string | null | undefined) => !!iso && new Date(iso).toDateString() === new Date().toDateString();

function note(kind: Note['kind'], text: () => string) {
  state.notes = [...state.notes.slice(-3), { kind, text }];
}

/** A server problem in the driver's words. */
function problemText(code: string | undefined, extra?: unknown): string {
  const left = (extra as { attempts_remaining?: number } | undefined)?.attempts_remaining;
  switch (code) {
    case 'INVALID_PIN':
      return left === 1 ? t('wrongPinOne') : t('wrongPin').replace('{n}', String(left ?? '?'));
    case 'PIN_LOCKED':
      return t('pinLocked');
    case 'INVALID_TRANSITION':
    case 'TRIP_NOT_ASSIGNED_TO_YOU':
      return t('tripMovedOn');
    case 'AVAILABILITY_LOCKED':
      return t('availabilityLocked');
    case 'DRIVER_NOT_APPROVED':
      return t('notApproved');
    case 'UPLOAD_TOO_LARGE':
    case 'MEDIA_TYPE_NOT_ALLOWED':
    case 'SIGNATURE_MISMATCH':
      return t('photoRefused');
    default:
      return `${t('error')}${code ? ` (${code})` : ''}`;
  }
}

// ---------- persistence ----------

async function saveCache() {
  await store.set('cache', {
    me: state.me,
    trips: [...state.trips.values()],
    notifications: state.notifications,
    earnings: state.earnings,
    settlements: state.settlements,
    cash: state.cash,
  });
}

async function loadCache() {
  const c = await store.get<{
    me: Me | null;
    trips: Trip[];
    notifications: Notification[];
    earnings: Earnings | null;
    settlements: Settlement[];
    cash?: Cash | null;
  }>('cache');
  if (!c || (state.me && c.me && c.me.user_id !== session.user()?.id)) return;
  if (c.me && c.me.user_id !== session.user()?.id) return;
  state.me = c.me;
  for (const tr of c.trips) state.trips.set(tr.id, tr);
  for (const tr of c.trips) if (tr.status === 'assigned') state.seenOffers.add(tr.id);
  state.notifications = c.notifications;
  state.earnings = c.earnings;
  state.settlements = c.settlements ?? [];
  state.cash = c.cash ?? null;
}

async function loadPending() {
  const user = session.user();
  state.pending = user ? await queue.pending(user.id) : [];
}

// ---------- server ----------

let pulling: Promise<void> | null = null;
let pullAgain: Promise<void> | null = null;

/** A trip from the server, unless the page already holds a newer copy (a read that started before an action was applied). */
function keepTrip(tr: Trip) {
  const held = state.trips.get(tr.id);
  if (!held || held.updated_at <= tr.updated_at) state.trips.set(tr.id, tr);
}

/**
 * Everything from the server: the profile, changes since the sync cursor, the current trips, earnings, cash. Called
 * while a refresh is under way (its reads may predate what the caller just did), it runs once more after it.
 */
function refresh(): Promise<void> {
  if (pulling) {
    pullAgain ??= pulling.then(() => {
      pullAgain = null;
      return refresh();
    });
    return pullAgain;
  }
  pulling = (async () => {
    try {
      state.me = (await ok(api.GET('/api/v1/driver/me'))) as Me;
      let cursor = await store.get<string>(`cursor:${state.me.user_id}`);
      for (let i = 0; i < 20; i++) {
        const r = await ok(api.GET('/api/v1/mobile/sync/pull', { params: { query: cursor ? { cursor } : {} } }));
        for (const tr of (r.entities.trips?.changed ?? []) as unknown as Trip[]) keepTrip(tr);
        for (const n of (r.entities.notifications?.changed ?? []) as unknown as Notification[]) {
          state.notifications = [n, ...state.notifications.filter((x) => x.id !== n.id)];
        }
        cursor = r.cursor;
        await store.set(`cursor:${state.me.user_id}`, cursor);
        if (!r.has_more) break;
      }
      state.notifications.sort((a, b) => b.created_at.localeCompare(a.created_at));
      state.notifications = state.notifications.slice(0, 100);
      // Offers that expired or went to someone else leave no change in the pull: the current list is the truth.
      const current = await ok(api.GET('/api/v1/driver/trips', { params: { query: { limit: 100 } } }));
      const ids = new Set(current.data.map((x) => x.id));
      for (const tr of current.data) keepTrip(tr as Trip);
      for (const [id, tr] of state.trips) if (!ids.has(id) && (tr.status === 'assigned' || ACTIVE.has(tr.status))) state.trips.delete(id);
      const from = new Date();
      from.setHours(0, 0, 0, 0);
      from.setDate(from.getDate() - 6);
      state.earnings = (await ok(
        api.GET('/api/v1/driver/earnings', { params: { query: { from: from.toISOString(), limit: 100 } } }),
      )) as Earnings;
      state.settlements = (await ok(api.GET('/api/v1/driver/settlements', { params: { query: { limit: 20 } } }))).data;
      state.cash = (await ok(api.GET('/api/v1/driver/cash', { params: { query: { limit: 20 } } }))) as Cash;
      await saveCache();
    } catch (err) {
      if (!navigator.onLine) return;
      const p = (err as { problem?: { code?: string; status?: number } }).problem;
      if (p?.status === 404 || p?.status === 403) note('error', () => t('notADriver'));
    } finally {
      pulling = null;
    }
  })();
  return pulling;
}

/** Uploads a stored photo or signature through an evidence upload slot; returns the stored object's id. */
async function upload(b: StoredBlob): Promise<string> {
  const body = {
    trip_id: b.meta.trip_id!,
    stage: b.meta.stage as 'pickup' | 'delivery',
    proof_type: b.meta.proof_type as 'photo' | 'signature',
    mime_type: b.blob.type as 'image/jpeg',
    size_bytes: b.blob.size,
    filename: b.meta.filename ?? 'evidence.jpg',
  };
  const r = await api.POST('/api/v1/storage/evidence/uploads', { body });
  if (!r.response.ok) {
    const p = r.error as { code?: string } | undefined;
    if (
      r.response.status >= 400 &&
      r.response.status < 500 &&
      r.response.status !== 401 &&
      r.response.status !== 408 &&
      r.response.status !== 429
    ) {
      throw Object.assign(new Error(problemText(p?.code)), { fatal: true, code: p?.code });
    }
    throw new Error(`upload slot ${r.response.status}`);
  }
  const slot = r.data!;
  // The slot's headers (its Content-Length is the browser's to set), each once whatever its case.
  const headers = new Headers();
  for (const [k, v] of Object.entries(slot.required_headers)) if (k.toLowerCase() !== 'content-length') headers.set(k, v);
  headers.set('content-type', slot.mime_type);
  headers.set('x-upload-token', slot.upload_token);
  const put = await authorizedFetch(slot.upload_url, { method: 'PUT', body: b.blob, headers });
  if (!put.ok) {
    const p = (await put.json().catch(() => ({}))) as { code?: string };
    if (put.status >= 400 && put.status < 500 && put.status !== 401)
      throw Object.assign(new Error(problemText(p.code)), { fatal: true, code: p.code });
    throw new Error(`upload ${put.status}`);
  }
  return slot.object_id;
}

/** The payload as sent: the evidence named by what was uploaded for it. */
function resolvePayload(op: QueuedOp): Record<string, unknown> {
  const up = op.uploaded ?? {};
  const payload = { ...op.payload };
  const evidence = up.photo
    ? { type: 'photo', storage_key: up.photo }
    : up.signature && op.type !== 'upload'
      ? { type: 'signature', storage_key: up.signature }
      : null;
  if (evidence && op.type !== 'upload') payload.evidence = evidence;
  return payload;
}

const OP_NAMES: Record<string, Parameters<typeof t>[0]> = {
  'trip.accept': 'actAccept',
  'trip.reject': 'actReject',
  'trip.verify_pickup': 'actPickup',
  'trip.start_delivery': 'actStart',
  'trip.verify_delivery': 'actDeliver',
  'trip.fail_delivery': 'actFail',
  'trip.return': 'actReturn',
  'notification.read': 'actRead',
  upload: 'actSignature',
};

/**
 * One sync at a time: a call while one runs (an enqueue, the stream, the poll) asks for one more round after it,
 * so the server's answers are told once (two callers joining one drain both told its refusals: the note twice).
 */
let syncing: Promise<void> | null = null;
let syncAgain = false;
function sync(): Promise<void> {
  if (syncing) {
    syncAgain = true;
    return syncing;
  }
  syncing = (async () => {
    try {
      do {
        syncAgain = false;
        await syncOnce();
      } while (syncAgain);
    } finally {
      syncing = null;
    }
  })();
  return syncing;
}

/** Sends the queue (when there is a network) and tells the driver, in words, what the server refused. */
async function syncOnce(): Promise<void> {
  const user = session.user();
  if (!user || !navigator.onLine) return;
  const before = await queue.pending(user.id);
  const results = await queue.drain(user.id, {
    upload: (b) => upload(b),
    resolve: resolvePayload,
    push: async (operations) => (await ok(api.POST('/api/v1/mobile/sync/push', { body: { operations } }))).results as OpResult[],
  });
  const failedTrips = new Set<string>();
  for (const r of results) {
    const op = before.find((o) => o.id === r.client_operation_id);
    const tripId = op?.payload.trip_id as string | undefined;
    const tr = tripId ? state.trips.get(tripId) : undefined;
    if (r.status === 'applied') {
      if (r.data && typeof r.data === 'object' && 'status' in r.data && tripId) state.trips.set(tripId, r.data as Trip);
      continue;
    }
    // One message per trip: later steps of a refused one fail for the same reason.
    if (tripId && failedTrips.has(tripId)) continue;
    if (tripId) failedTrips.add(tripId);
    const where = tr ? ` · ${tripLabel(tr)}` : '';
    note(r.status === 'conflict' ? 'warn' : 'error', () => `${t(OP_NAMES[r.type] ?? 'error')}${where}: ${problemText(r.code, r.server)}`);
  }
  await loadPending();
  if (!session.user()) return;
  // What the server answered is kept and shown at once: the refresh after it may wait for another one or not get
  // through (the network went again).
  if (results.length > 0) await saveCache();
  if (fingerprint() !== shown) render();
  if (results.length > 0 || before.length > 0) await refresh();
  if (fingerprint() !== shown) render();
  else renderBanners();
}

/** Queues one action (or several steps of one: `then`, queued with it and sent in the same push), shows it, sends it. */
async function enqueue(
  type: string,
  payload: Record<string, unknown>,
  files: StoredBlob[] = [],
  blobs?: Record<string, string>,
  then: { type: string; payload: Record<string, unknown> }[] = [],
) {
  const user = session.user()!;
  await queue.add({ id: clientId(type.replace(/[^a-z_.]/g, '')), type, payload, user_id: user.id, blobs, label: type }, files);
  for (const next of then)
    await queue.add({
      id: clientId(next.type.replace(/[^a-z_.]/g, '')),
      type: next.type,
      payload: next.payload,
      user_id: user.id,
      label: next.type,
    });
  await loadPending();
  if (!navigator.onLine) note('warn', () => t('savedOffline'));
  render();
  await sync();
}

// ---------- GPS ----------

const gps = {
  watch: null as number | null,
  last: null as null | { lat: number; lon: number; at: number },
  lastFix: 0,
  lowBattery: false,
  flushing: false,
};

function onDuty(): boolean {
  return !!state.me?.available || trips().some((tr) => ACTIVE.has(tr.status));
}

function updateGps() {
  if (!('geolocation' in navigator)) {
    state.gps = 'unsupported';
    return;
  }
  const want = !!session.user() && onDuty();
  if (want && gps.watch === null) {
    gps.watch = navigator.geolocation.watchPosition(onPosition, onGpsError, {
      enableHighAccuracy: true,
      maximumAge: 5000,
      timeout: 60_000,
    });
    if (state.gps === 'off') state.gps = 'stale';
  } else if (!want && gps.watch !== null) {
    navigator.geolocation.clearWatch(gps.watch);
    gps.watch = null;
    state.gps = 'off';
  }
  wake.set(trips().some((tr) => ACTIVE.has(tr.status)));
}

/**
 * Keeps a point when the driver moved (every 5 s at most while moving) or, standing still, once a minute; three
 * times less often on a low battery. Points wait in IndexedDB and go in batches.
 */
async function onPosition(p: GeolocationPosition) {
  gps.lastFix = Date.now();
  // Fixes heard and points kept, on the body (`data-gps-fixes`, `data-gps-kept`): what the batching saves is visible.
  document.body.dataset.gpsFixes = String(Number(document.body.dataset.gpsFixes ?? 0) + 1);
  if (state.gps !== 'ok') {
    state.gps = 'ok';
    renderBanners();
  }
  const here = { lat: p.coords.latitude, lon: p.coords.longitude, at: Date.now() };
  if (!keepFix(gps.last, here, gps.lowBattery)) return;
  gps.last = here;
  document.body.dataset.gpsKept = String(Number(document.body.dataset.gpsKept ?? 0) + 1);
  await store.put('points', {
    client_point_id: clientId('gps'),
    location: { type: 'Point', coordinates: [here.lon, here.lat] },
    recorded_at: new Date(p.timestamp || here.at).toISOString(),
    ...(Number.isFinite(p.coords.accuracy) ? { accuracy_m: Math.min(100_000, Math.max(0, p.coords.accuracy)) } : {}),
    ...(p.coords.speed !== null && p.coords.speed >= 0 ? { speed_mps: Math.min(200, p.coords.speed) } : {}),
    ...(p.coords.heading !== null && p.coords.heading >= 0 && p.coords.heading <= 360 ? { heading: p.coords.heading } : {}),
  });
  renderStatus();
  if ((await store.count('points')) >= 10) void flushPoints();
}

function onGpsError(e: GeolocationPositionError) {
  state.gps = e.code === e.PERMISSION_DENIED ? 'denied' : 'stale';
  renderBanners();
}

/** Sends the waiting GPS points, 500 a request (the batch route's limit), until none is left or the network fails. */
async function flushPoints(): Promise<void> {
  if (gps.flushing || !navigator.onLine || !session.user()) return;
  gps.flushing = true;
  try {
    for (;;) {
      const points = await store.first<{ client_point_id: string }>('points', 500);
      if (points.length === 0) break;
      await ok(api.POST('/api/v1/driver/locations/batch', { body: { points: points as never } }));
      for (const p of points) await store.delete('points', p.client_point_id);
    }
  } catch {
    /* kept for the next flush */
  } finally {
    gps.flushing = false;
    renderStatus();
  }
}

setInterval(() => {
  if (gps.watch !== null && Date.now() - gps.lastFix > 120_000 && state.gps === 'ok') {
    state.gps = 'stale';
    renderBanners();
  }
  void flushPoints();
}, 15_000);
/** Low battery (checked at start and every minute): fewer points kept; `data-low-battery` on the body says so. */
const checkBattery = () =>
  void batteryLow().then((low) => {
    gps.lowBattery = low;
    document.body.dataset.lowBattery = String(low);
  });
checkBattery();
setInterval(checkBattery, 60_000);

// ---------- offers: ring, vibrate, countdown ----------

function ring() {
  try {
    navigator.vibrate?.([400, 150, 400, 150, 400]);
  } catch {
    /* no vibration */
  }
  try {
    const Ctx = window.AudioContext ?? (window as unknown as { webkitAudioContext?: typeof AudioContext }).webkitAudioContext;
    if (!Ctx) return;
    const ctx = new Ctx();
    for (let i = 0; i < 3; i++) {
      const o = ctx.createOscillator();
      const g = ctx.createGain();
      o.frequency.value = 880;
      g.gain.value = 0.2;
      o.connect(g).connect(ctx.destination);
      o.start(ctx.currentTime + i * 0.5);
      o.stop(ctx.currentTime + i * 0.5 + 0.3);
    }
    setTimeout(() => void ctx.close(), 2000);
  } catch {
    /* no sound */
  }
}

function secondsLeft(tr: Trip): number | null {
  if (!state.me?.acceptance_timeout_s || !tr.assigned_at) return null;
  return Math.max(0, Math.round((new Date(tr.assigned_at).getTime() + state.me.acceptance_timeout_s * 1000 - Date.now()) / 1000));
}

setInterval(() => {
  for (const el of document.querySelectorAll<HTMLElement>('[data-countdown]')) {
    const tr = state.trips.get(el.dataset.countdown!);
    const s = tr ? secondsLeft(tr) : null;
    el.textContent = s === null ? '' : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  }
}, 1000);

// ---------- rendering ----------

function render() {
  if (!session.user()) {
    // Already asking for the login: what is being typed stays.
    if (!root.querySelector('form.d-login')) renderLogin();
    return;
  }
  shown = fingerprint();
  const typed = typedValues();
  const offers = trips().filter((tr) => tr.status === 'assigned');
  for (const o of offers) {
    if (!state.seenOffers.has(o.id)) {
      state.seenOffers.add(o.id);
      ring();
    }
  }
  updateGps();
  const tabs: [Tab, string][] = [
    ['today', t('today')],
    ['route', t('route')],
    ['inbox', `${t('inbox')}${state.notifications.some((n) => !n.read) ? ' •' : ''}`],
    ['earnings', t('earnings')],
  ];
  clear(
    root,
    h(
      'header',
      { class: 'd-top' },
      h('strong', { class: 'd-name' }, state.me?.display_name ?? session.user()!.display_name),
      h('span', { id: 'net', class: 'd-net', 'data-online': String(state.online) }, state.online ? t('online') : t('offlineNow')),
      h('span', { id: 'status' }),
      h(
        'select',
        { 'aria-label': t('language'), onchange: (e: Event) => (setLang((e.target as HTMLSelectElement).value as Lang), render()) },
        h('option', { value: 'es', selected: getLang() === 'es' }, 'ES'),
        h('option', { value: 'en', selected: getLang() === 'en' }, 'EN'),
      ),
      h('button', { class: 'd-link', onclick: () => void logout().then(render) }, t('logout')),
    ),
    h('div', { id: 'banners' }),
    h('main', { id: 'main', class: 'd-main' }, renderTab()),
    h(
      'nav',
      { class: 'd-tabs', 'aria-label': t('menu') },
      tabs.map(([id, text]) =>
        h(
          'button',
          { class: 'd-tab', 'aria-current': state.tab === id ? 'page' : null, 'data-tab': id, onclick: () => ((state.tab = id), render()) },
          text,
        ),
      ),
    ),
  );
  renderBanners();
  renderStatus();
  typed.restore();
  if (state.tab === 'route') void drawMap();
}

/**
 * What the driver has typed into the page's fields (a PIN, the cash taken, a reason), keyed by the trip card and the
 * field: a redraw (a poll that brought a new offer or notification, the language changed) puts it back, and the field
 * that had the focus keeps it.
 */
root.addEventListener('input', (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement) e.target.dataset.typed = 'true';
});
function typedValues() {
  const key = (el: Element) => `${el.closest('[data-next-trip]')?.getAttribute('data-next-trip') ?? ''}/${el.id}`;
  const kept = new Map<string, string>();
  for (const el of root.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input[id], textarea[id]')) {
    if (el.dataset.typed && el.type !== 'file' && el.type !== 'checkbox') kept.set(key(el), el.value);
  }
  const focused =
    document.activeElement && root.contains(document.activeElement) && document.activeElement.id ? key(document.activeElement) : null;
  return {
    restore() {
      for (const el of root.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input[id], textarea[id]')) {
        const k = key(el);
        if (kept.has(k)) {
          el.value = kept.get(k)!;
          el.dataset.typed = 'true';
        }
        if (k === focused) el.focus();
      }
    },
  };
}

function renderStatus() {
  const el = document.getElementById('status');
  if (!el) return;
  void store.count('points').then((points) => {
    const ops = state.pending.length;
    el.dataset.queue = String(ops);
    el.dataset.points = String(points);
    el.className = 'd-status';
    el.textContent =
      ops + points === 0
        ? t('allSent')
        : tf('waiting', { ops: count(ops, 'actionOne', 'actions'), points: count(points, 'gpsPointOne', 'gpsPoints') });
  });
}

function renderBanners() {
  const el = document.getElementById('banners');
  if (!el) return;
  const out: HTMLElement[] = [];
  if (state.sessionLost) out.push(h('p', { class: 'd-banner warn' }, t('sessionLost')));
  if (!state.online) out.push(h('p', { class: 'd-banner warn', 'data-banner': 'offline' }, t('offlineBanner')));
  if (state.me?.availability_locked)
    out.push(h('p', { class: 'd-banner error', 'data-banner': 'locked' }, `${t('lockedBy')}: ${state.me.availability_lock_reason ?? '—'}`));
  if (state.gps === 'denied') out.push(h('p', { class: 'd-banner error', 'data-banner': 'gps-denied' }, t('gpsDenied')));
  else if (state.gps === 'stale' && onDuty()) out.push(h('p', { class: 'd-banner warn', 'data-banner': 'gps-stale' }, t('gpsStale')));
  for (const n of state.notes) {
    out.push(
      h(
        'p',
        { class: `d-banner ${n.kind}`, role: n.kind === 'ok' ? 'status' : 'alert', 'data-note': n.kind },
        n.text(),
        ' ',
        h(
          'button',
          { class: 'd-x', 'aria-label': t('close'), onclick: () => ((state.notes = state.notes.filter((x) => x !== n)), renderBanners()) },
          '×',
        ),
      ),
    );
  }
  clear(el, out);
}

function renderTab(): HTMLElement {
  switch (state.tab) {
    case 'route':
      return renderRoute();
    case 'inbox':
      return renderInbox();
    case 'earnings':
      return renderEarnings();
    default:
      return renderToday();
  }
}

function availability(): HTMLElement {
  const me = state.me;
  const on = !!me?.available;
  return h(
    'section',
    { class: 'd-card d-duty' },
    h(
      'div',
      null,
      h('strong', null, on ? t('available') : t('notAvailable')),
      me?.availability_locked ? h('div', { class: 'muted' }, t('availabilityLocked')) : null,
    ),
    h(
      'button',
      {
        id: 'duty',
        class: on ? 'd-big' : 'd-big primary',
        'aria-pressed': String(on),
        disabled: !state.online || (!on && !!me?.availability_locked) || !me,
        onclick: async () => {
          const r = await api.POST('/api/v1/driver/availability', { body: { available: !on } });
          if (r.response.ok && r.data) state.me = { ...state.me!, ...(r.data as Partial<Me>) };
          else {
            const code = (r.error as { code?: string } | undefined)?.code;
            note('error', () => problemText(code));
          }
          await saveCache();
          render();
        },
      },
      on ? t('goOff') : t('goOn'),
    ),
    !state.online ? h('p', { class: 'muted' }, t('needsNetwork')) : null,
  );
}

function offerCard(tr: Trip): HTMLElement {
  const me = state.me?.last_location ? latlon(state.me.last_location) : null;
  const toPickup = me ? haversine(me, latlon(tr.pickup_location)) : null;
  const length = haversine(latlon(tr.pickup_location), latlon(tr.dropoff_location));
  const cash = cashToCollect(tr);
  let rejecting = false;
  const form = h('form', { class: 'd-reject', hidden: true }) as HTMLFormElement;
  const reason = h(
    'select',
    { name: 'reason', 'aria-label': t('rejectReason') },
    ['tooFar', 'vehicleFull', 'endingShift', 'otherReason'].map((k) => h('option', { value: t(k as 'tooFar') }, t(k as 'tooFar'))),
  );
  form.append(h('label', null, t('rejectReason'), reason), h('button', { type: 'submit', class: 'd-big danger' }, t('confirmReject')));
  form.onsubmit = (e) => {
    e.preventDefault();
    void enqueue('trip.reject', { trip_id: tr.id, reason: reason.value });
  };
  return h(
    'article',
    { class: 'd-card d-offer', 'data-offer': tr.id },
    h('h2', null, t('newOffer'), ' ', h('span', { class: 'd-countdown', 'data-countdown': tr.id, 'aria-label': t('timeToAccept') })),
    h(
      'dl',
      null,
      h('dt', null, t('pickup')),
      h('dd', null, tr.pickup_address),
      h('dt', null, t('dropoff')),
      h('dd', null, tr.dropoff_address),
      h('dt', null, t('distance')),
      h('dd', null, `${fmtKm(length)}${toPickup !== null ? ` (+${fmtKm(toPickup)} ${t('toPickup')})` : ''}`),
      h('dt', null, t('yourFee')),
      h('dd', { class: 'd-fee' }, money(tr.driver_earning, tr.currency)),
      cash ? [h('dt', null, t('cashToCollect')), h('dd', { class: 'd-cash' }, money(cash, tr.currency))] : null,
    ),
    h(
      'div',
      { class: 'd-row' },
      h(
        'button',
        { class: 'd-big primary', 'data-action': 'accept', onclick: () => void enqueue('trip.accept', { trip_id: tr.id }) },
        t('accept'),
      ),
      h(
        'button',
        { class: 'd-big', 'data-action': 'reject', onclick: () => ((rejecting = !rejecting), (form.hidden = !rejecting)) },
        t('reject'),
      ),
    ),
    form,
  );
}

/** The cash the driver carries (cash on delivery): the total, his limit, and the latest `entries` movements. */
function cashCard(entries: number): HTMLElement | null {
  const c = state.cash;
  if (!c) return null;
  const list = c.data.slice(0, entries);
  return h(
    'section',
    { class: 'd-card d-cash-card', 'data-cash-in-hand': c.cash_in_hand },
    h('h2', null, `${t('cashInHand')}: `, h('span', { class: 'd-total' }, `${c.cash_in_hand} ${c.currency}`)),
    c.cash_limit ? h('p', { class: 'muted' }, `${t('cashLimit')}: ${c.cash_limit} ${c.currency}`) : null,
    c.at_cash_limit ? h('p', { class: 'd-banner warn', 'data-banner': 'cash-limit' }, t('atCashLimit')) : null,
    list.length === 0
      ? h('p', { class: 'muted' }, t('cashNone'))
      : h(
          'ul',
          { class: 'd-list', 'aria-label': t('cashMovements') },
          list.map((e) => {
            const tr = e.trip_id ? state.trips.get(e.trip_id) : undefined;
            const what = t(`cashEntry_${e.entry_type}` as 'cashEntry_cash_collected');
            return h(
              'li',
              { 'data-cash-entry': e.entry_type },
              h(
                'div',
                null,
                tr ? `${what} · ${tripLabel(tr)}` : what,
                h('div', { class: 'muted' }, `${fmtTime(e.created_at)}${e.note ? ` · ${e.note}` : ''}`),
              ),
              h('strong', null, `${e.amount.startsWith('-') ? '−' + e.amount.slice(1) : '+' + e.amount}`),
            );
          }),
        ),
  );
}

function tripRow(tr: Trip): HTMLElement {
  return h(
    'li',
    { class: 'd-trip', 'data-trip-id': tr.id, 'data-status': tr.status },
    h(
      'div',
      null,
      h('strong', null, tr.dropoff_address),
      h('div', { class: 'muted' }, `${label(tr.status)} · ${money(tr.driver_earning, tr.currency)}`),
      cashToCollect(tr) && ACTIVE.has(tr.status)
        ? h(
            'div',
            { class: 'd-cash', 'data-cash-due': cashToCollect(tr) },
            `${t('cashToCollect')}: ${money(cashToCollect(tr), tr.currency)}`,
          )
        : null,
    ),
    ACTIVE.has(tr.status) ? h('button', { class: 'd-go', onclick: () => ((state.tab = 'route'), render()) }, t('openTrip')) : null,
  );
}

function queueList(): HTMLElement | null {
  if (state.pending.length === 0) return null;
  return h(
    'section',
    { class: 'd-card', id: 'queue' },
    h('h2', null, t('toSend')),
    h(
      'ul',
      { class: 'd-list' },
      state.pending.map((op) => {
        const tr = state.trips.get(op.payload.trip_id as string);
        return h(
          'li',
          { 'data-op': op.type },
          `${t(OP_NAMES[op.type] ?? 'error')}${tr ? ` · ${tripLabel(tr)}` : ''}`,
          h('span', { class: 'muted' }, ` ${fmtTime(op.created_at)}`),
        );
      }),
    ),
  );
}

function renderToday(): HTMLElement {
  const all = trips();
  const offers = all.filter((tr) => tr.status === 'assigned');
  const active = all.filter((tr) => ACTIVE.has(tr.status));
  const done = all.filter(
    (tr) =>
      ['completed', 'returned', 'failed'].includes(tr.status) &&
      isToday(tr.completed_at ?? tr.returned_at ?? tr.failed_at ?? tr.updated_at),
  );
  const earned = (state.earnings?.data ?? []).filter((e) => isToday(e.completed_at));
  const total = sumMoney(earned.map((e) => e.driver_earning));
  return h(
    'div',
    { class: 'd-stack' },
    availability(),
    cashCard(3),
    state.install ? h('button', { class: 'd-big', onclick: () => void state.install?.() }, t('install')) : null,
    queueList(),
    offers.map(offerCard),
    h(
      'section',
      { class: 'd-card' },
      h('h2', null, t('activeTrips')),
      active.length ? h('ul', { class: 'd-list' }, active.map(tripRow)) : h('p', { class: 'muted' }, t('noActive')),
    ),
    h(
      'section',
      { class: 'd-card', id: 'today-earnings' },
      h('h2', null, t('todayEarnings')),
      h(
        'p',
        { class: 'd-total' },
        `${total} ${state.earnings?.currency ?? ''}`,
        h('span', { class: 'muted' }, ` · ${count(earned.length, 'tripOne', 'trips')}`),
      ),
      done.length ? h('ul', { class: 'd-list' }, done.map(tripRow)) : null,
    ),
  );
}

// ---------- the route ----------

interface Stop {
  trip: Trip;
  kind: 'pickup' | 'dropoff';
  at: { lat: number; lon: number };
  address: string;
}

function stops(): Stop[] {
  const active = trips()
    .filter((tr) => ACTIVE.has(tr.status))
    .sort((a, b) => (a.stop_order ?? 1e9) - (b.stop_order ?? 1e9) || (a.accepted_at ?? '').localeCompare(b.accepted_at ?? ''));
  const out: Stop[] = [];
  for (const tr of active)
    if (tr.status === 'accepted') out.push({ trip: tr, kind: 'pickup', at: latlon(tr.pickup_location), address: tr.pickup_address });
  for (const tr of active) {
    if (tr.status === 'returning') out.push({ trip: tr, kind: 'pickup', at: latlon(tr.pickup_location), address: tr.pickup_address });
    else out.push({ trip: tr, kind: 'dropoff', at: latlon(tr.dropoff_location), address: tr.dropoff_address });
  }
  return out;
}

function navLinks(s: Stop): HTMLElement {
  const { lat, lon } = s.at;
  return h(
    'div',
    { class: 'd-row d-nav' },
    h('a', { class: 'd-btn', href: `geo:${lat},${lon}?q=${lat},${lon}(${encodeURIComponent(s.address)})` }, t('navigate')),
    h(
      'a',
      {
        class: 'd-btn',
        href: `https://www.openstreetmap.org/directions?route=%3B${lat}%2C${lon}#map=17/${lat}/${lon}`,
        target: '_blank',
        rel: 'noopener',
      },
      'OpenStreetMap',
    ),
    h(
      'a',
      { class: 'd-btn', href: `https://www.google.com/maps/dir/?api=1&destination=${lat},${lon}`, target: '_blank', rel: 'noopener' },
      'Google Maps',
    ),
  );
}

/** Call or WhatsApp the recipient: the trip carries his phone only while the driver carries the trip. */
function contactLinks(tr: Trip): HTMLElement | null {
  const phone = tr.recipient_phone;
  if (!phone) return null;
  const digits = phone.replace(/[^\d]/g, '');
  return h(
    'div',
    { class: 'd-contact', 'data-recipient-phone': phone },
    h('p', { class: 'muted' }, `${t('recipient')}: ${tr.recipient_name ? `${tr.recipient_name} · ` : ''}${phone}`),
    h(
      'div',
      { class: 'd-row' },
      h('a', { class: 'd-btn d-call', href: `tel:${phone}`, 'aria-label': t('callRecipient') }, t('call')),
      h(
        'a',
        {
          class: 'd-btn d-whatsapp',
          href: `https://wa.me/${digits}`,
          target: '_blank',
          rel: 'noopener',
          'aria-label': t('whatsappRecipient'),
        },
        'WhatsApp',
      ),
    ),
  );
}

function pinField(id: string): HTMLInputElement {
  return h('input', {
    id,
    name: 'pin',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    pattern: '[0-9]*',
    maxlength: '12',
    required: true,
    class: 'd-pin',
  });
}

/** A photo from the camera (capture=environment), resized before it is kept; shows a preview. */
function photoField(id: string, onPhoto: (b: Blob | null) => void): HTMLElement {
  const preview = h('img', { class: 'd-preview', alt: '', hidden: true });
  const input = h('input', {
    id,
    type: 'file',
    accept: 'image/*',
    capture: 'environment',
    class: 'd-file',
    onchange: async () => {
      const f = input.files?.[0];
      if (!f) return onPhoto(null);
      try {
        const small = await resizeImage(f);
        onPhoto(small);
        const reader = new FileReader();
        reader.onload = () => {
          preview.src = String(reader.result);
          preview.hidden = false;
          wrap.dataset.ready = 'true';
        };
        reader.readAsDataURL(small);
      } catch {
        note('error', () => t('photoUnreadable'));
        renderBanners();
      }
    },
  });
  const wrap = h('div', { class: 'd-photo' }, h('label', { for: id, class: 'd-btn' }, t('takePhoto')), input, preview);
  return wrap;
}

/** A signature drawn with a finger on a canvas; `blob()` gives it as PNG, null when nothing was drawn. */
function signaturePad() {
  const canvas = h('canvas', { class: 'd-sign', width: '600', height: '220', 'aria-label': t('signHere') });
  const ctx = canvas.getContext('2d')!;
  ctx.lineWidth = 3;
  ctx.lineCap = 'round';
  ctx.strokeStyle = '#111827';
  let drawing = false;
  let drawn = false;
  const at = (e: PointerEvent) => {
    const r = canvas.getBoundingClientRect();
    return [((e.clientX - r.left) * canvas.width) / r.width, ((e.clientY - r.top) * canvas.height) / r.height] as const;
  };
  canvas.addEventListener('pointerdown', (e) => {
    drawing = true;
    canvas.setPointerCapture(e.pointerId);
    ctx.beginPath();
    ctx.moveTo(...at(e));
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!drawing) return;
    ctx.lineTo(...at(e));
    ctx.stroke();
    drawn = true;
    canvas.dataset.drawn = 'true';
  });
  const stop = () => (drawing = false);
  canvas.addEventListener('pointerup', stop);
  canvas.addEventListener('pointercancel', stop);
  const clearBtn = h(
    'button',
    {
      type: 'button',
      class: 'd-btn',
      onclick: () => (ctx.clearRect(0, 0, canvas.width, canvas.height), (drawn = false), delete canvas.dataset.drawn),
    },
    t('clearSignature'),
  );
  return {
    el: h('div', { class: 'd-signature' }, h('p', { class: 'muted' }, t('signHere')), canvas, clearBtn),
    blob: (): Promise<Blob | null> => (drawn ? new Promise((r) => canvas.toBlob((b) => r(b), 'image/png')) : Promise.resolve(null)),
  };
}

const blobKey = () => clientId('blob');

function stopActions(s: Stop): HTMLElement {
  const tr = s.trip;
  if (tr.status === 'accepted') {
    const pin = pinField('pickup-pin');
    return h(
      'form',
      {
        class: 'd-form',
        onsubmit: (e: Event) => {
          e.preventDefault();
          void (async () => {
            await enqueue('trip.verify_pickup', { trip_id: tr.id, pin: pin.value.trim() }, [], undefined, [
              { type: 'trip.start_delivery', payload: { trip_id: tr.id } },
            ]);
          })();
        },
      },
      h('label', { for: 'pickup-pin' }, t('pickupPinFromMerchant')),
      pin,
      h('button', { type: 'submit', class: 'd-big primary' }, t('confirmPickup')),
    );
  }
  if (tr.status === 'picked_up') {
    return h(
      'button',
      { class: 'd-big primary', onclick: () => void enqueue('trip.start_delivery', { trip_id: tr.id }) },
      t('startDelivery'),
    );
  }
  if (tr.status === 'returning') {
    const pin = pinField('return-pin');
    return h(
      'form',
      {
        class: 'd-form',
        onsubmit: (e: Event) => (e.preventDefault(), void enqueue('trip.return', { trip_id: tr.id, pin: pin.value.trim() })),
      },
      h('p', null, t('returnHint')),
      h('label', { for: 'return-pin' }, t('pickupPinFromMerchant')),
      pin,
      h('button', { type: 'submit', class: 'd-big primary' }, t('confirmReturn')),
    );
  }
  // In transit: the delivery, or the report of a failed one.
  let photo: Blob | null = null;
  let failPhoto: Blob | null = null;
  const pin = pinField('delivery-pin');
  const sign = signaturePad();
  // A cash trip: the amount taken at the door (prefilled with what is due) and, when it differs, why.
  const cashDue = cashToCollect(tr);
  const cashInput = cashDue
    ? (h('input', {
        id: 'delivery-cash',
        name: 'cash_collected',
        inputmode: 'decimal',
        pattern: '[0-9]+([.][0-9]{1,2})?',
        required: true,
        value: cashDue,
        class: 'd-cash-input',
      }) as HTMLInputElement)
    : null;
  const cashReason = cashDue
    ? (h('input', { id: 'delivery-cash-reason', name: 'cash_discrepancy_reason', maxlength: '500' }) as HTMLInputElement)
    : null;
  const deliver = h(
    'form',
    {
      class: 'd-form',
      id: 'deliver',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void (async () => {
          const files: StoredBlob[] = [];
          const blobs: Record<string, string> = {};
          const signature = await sign.blob();
          if (photo) {
            const key = blobKey();
            files.push({ key, blob: photo, meta: { trip_id: tr.id, stage: 'delivery', proof_type: 'photo', filename: 'delivery.jpg' } });
            blobs.photo = key;
          }
          // The signature is kept as evidence of the trip; it is the proof's evidence when there is no photo.
          if (signature && photo) {
            const key = blobKey();
            await queue.add(
              {
                id: clientId('upload'),
                type: 'upload',
                payload: { trip_id: tr.id },
                user_id: session.user()!.id,
                blobs: { signature: key },
              },
              [{ key, blob: signature, meta: { trip_id: tr.id, stage: 'delivery', proof_type: 'signature', filename: 'signature.png' } }],
            );
          } else if (signature) {
            const key = blobKey();
            files.push({
              key,
              blob: signature,
              meta: { trip_id: tr.id, stage: 'delivery', proof_type: 'signature', filename: 'signature.png' },
            });
            blobs.signature = key;
          }
          const payload: Record<string, unknown> = { trip_id: tr.id, pin: pin.value.trim() };
          if (cashInput) {
            payload.cash_collected = cashInput.value.trim();
            const why = cashReason?.value.trim();
            if (why) payload.cash_discrepancy_reason = why;
          }
          await enqueue('trip.verify_delivery', payload, files, blobs);
        })();
      },
    },
    h('label', { for: 'delivery-pin' }, t('deliveryPinLabel')),
    pin,
    cashInput ? h('label', { for: 'delivery-cash' }, `${t('cashCollectedLabel')} (${money(cashDue, tr.currency)})`) : null,
    cashInput,
    cashReason ? h('label', { for: 'delivery-cash-reason' }, t('cashDiscrepancyLabel')) : null,
    cashReason,
    photoField('delivery-photo', (b) => (photo = b)),
    sign.el,
    h('button', { type: 'submit', class: 'd-big primary', id: 'confirm-delivery' }, t('confirmDelivery')),
  );
  const reason = h(
    'select',
    { id: 'fail-reason', name: 'reason' },
    ['recipient_absent', 'refused', 'wrong_address', 'unsafe_location', 'damaged', 'other'].map((r) =>
      h('option', { value: r }, t(`fail_${r}` as 'fail_other')),
    ),
  );
  const noteInput = h('input', { id: 'fail-note', name: 'note', maxlength: '500' });
  const fail = h(
    'details',
    { class: 'd-fail' },
    h('summary', { class: 'd-btn' }, t('couldNotDeliver')),
    h(
      'form',
      {
        class: 'd-form',
        onsubmit: (e: Event) => {
          e.preventDefault();
          const files: StoredBlob[] = [];
          const blobs: Record<string, string> = {};
          if (failPhoto) {
            const key = blobKey();
            files.push({ key, blob: failPhoto, meta: { trip_id: tr.id, stage: 'delivery', proof_type: 'photo', filename: 'attempt.jpg' } });
            blobs.photo = key;
          }
          void enqueue(
            'trip.fail_delivery',
            { trip_id: tr.id, reason: reason.value, ...(noteInput.value.trim() ? { note: noteInput.value.trim() } : {}) },
            files,
            blobs,
          );
        },
      },
      h('label', { for: 'fail-reason' }, t('failReason')),
      reason,
      h('label', { for: 'fail-note' }, t('failNote')),
      noteInput,
      photoField('fail-photo', (b) => (failPhoto = b)),
      h('button', { type: 'submit', class: 'd-big danger' }, t('reportFailed')),
    ),
  );
  return h('div', { class: 'd-stack' }, deliver, fail);
}

function renderRoute(): HTMLElement {
  const list = stops();
  if (list.length === 0) return h('div', { class: 'd-stack' }, h('section', { class: 'd-card' }, h('p', null, t('noActive'))));
  const next = list[0]!;
  return h(
    'div',
    { class: 'd-stack' },
    h(
      'section',
      { class: 'd-card d-next', 'data-next-trip': next.trip.id, 'data-status': next.trip.status },
      h('p', { class: 'muted' }, `${t('nextStop')} · ${next.kind === 'pickup' ? t('pickup') : t('dropoff')} · ${label(next.trip.status)}`),
      h('h2', { class: 'd-address' }, next.address),
      next.trip.notes ? h('p', null, next.trip.notes) : null,
      cashToCollect(next.trip) && next.kind === 'dropoff'
        ? h('p', { class: 'd-cash' }, `${t('cashToCollect')}: ${money(cashToCollect(next.trip), next.trip.currency)}`)
        : null,
      navLinks(next),
      contactLinks(next.trip),
      stopActions(next),
    ),
    h('div', { id: 'map', class: 'd-map' }, h('p', { class: 'muted d-map-wait' }, t('mapLoading'))),
    h(
      'section',
      { class: 'd-card' },
      h('h2', null, t('stopsInOrder')),
      h(
        'ol',
        { class: 'd-list' },
        list.map((s) => h('li', { 'data-stop': s.kind }, `${s.kind === 'pickup' ? t('pickup') : t('dropoff')}: ${s.address}`)),
      ),
    ),
  );
}

let mapDispose: (() => void) | null = null;

/** The stops on a map: Leaflet loaded on first use (not in the first load), with the console's tile fallback. */
async function drawMap() {
  const el = document.getElementById('map');
  if (!el) return;
  mapDispose?.();
  mapDispose = null;
  try {
    const m = await import('./map');
    const L = (await import('leaflet')).default;
    if (!el.isConnected) return;
    el.replaceChildren();
    const list = stops();
    const map = m.createMap(el, { center: list[0] ? [list[0].at.lat, list[0].at.lon] : undefined, zoom: 14 });
    const pts: [number, number][] = [];
    list.forEach((s, i) => {
      const at: [number, number] = [s.at.lat, s.at.lon];
      pts.push(at);
      L.circleMarker(at, {
        radius: i === 0 ? 11 : 8,
        color: s.kind === 'pickup' ? m.COLORS.pickup : m.COLORS.dropoff,
        fillOpacity: 0.85,
        weight: 3,
      })
        .bindTooltip(`${i + 1}. ${s.address}`)
        .addTo(map);
    });
    if (gps.last) {
      L.circleMarker([gps.last.lat, gps.last.lon], { radius: 7, color: m.COLORS.available, fillOpacity: 1 }).addTo(map);
      pts.unshift([gps.last.lat, gps.last.lon]);
    }
    if (pts.length > 1) {
      L.polyline(pts, { color: '#1d4ed8', weight: 3, opacity: 0.7 }).addTo(map);
      map.fitBounds(pts, { padding: [30, 30] });
    }
    el.dataset.stops = String(list.length);
    mapDispose = () => m.disposeMap(map);
  } catch {
    el.replaceChildren(h('p', { class: 'muted' }, t('noTiles')));
  }
}

function renderInbox(): HTMLElement {
  return h(
    'section',
    { class: 'd-card' },
    h('h2', null, t('inbox')),
    state.notifications.length === 0
      ? h('p', { class: 'muted' }, t('nothingPending'))
      : h(
          'ul',
          { class: 'd-list' },
          state.notifications.map((n) =>
            h(
              'li',
              { class: n.read ? 'd-read' : 'd-unread', 'data-notification': n.id },
              h('div', null, h('strong', null, n.title), h('div', null, n.body), h('div', { class: 'muted' }, fmtTime(n.created_at))),
              n.read
                ? null
                : h(
                    'button',
                    {
                      class: 'd-go',
                      onclick: () => {
                        n.read = true;
                        void saveCache();
                        void enqueue('notification.read', { notification_id: n.id });
                      },
                    },
                    t('markRead'),
                  ),
            ),
          ),
        ),
  );
}

function renderEarnings(): HTMLElement {
  const e = state.earnings;
  const byDay = new Map<string, { amounts: string[]; count: number }>();
  for (const row of e?.data ?? []) {
    const day = new Date(row.completed_at).toLocaleDateString(getLang() === 'es' ? 'es-BO' : 'en-US', {
      weekday: 'short',
      day: 'numeric',
      month: 'short',
    });
    const d = byDay.get(day) ?? { amounts: [], count: 0 };
    d.amounts.push(row.driver_earning);
    d.count++;
    byDay.set(day, d);
  }
  return h(
    'div',
    { class: 'd-stack' },
    cashCard(20),
    h(
      'section',
      { class: 'd-card' },
      h('h2', null, t('last7Days')),
      h(
        'p',
        { class: 'd-total' },
        `${e?.total_earnings ?? '0.00'} ${e?.currency ?? ''}`,
        h('span', { class: 'muted' }, ` · ${count(e?.completed_trips ?? 0, 'tripOne', 'trips')}`),
      ),
      h(
        'table',
        { class: 'd-table' },
        h('thead', null, h('tr', null, h('th', null, t('day')), h('th', null, t('trips')), h('th', null, t('earnings')))),
        h(
          'tbody',
          null,
          [...byDay].map(([day, d]) => h('tr', null, h('td', null, day), h('td', null, d.count), h('td', null, sumMoney(d.amounts)))),
        ),
      ),
    ),
    h(
      'section',
      { class: 'd-card' },
      h('h2', null, t('perTrip')),
      h(
        'ul',
        { class: 'd-list' },
        (e?.data ?? []).map((row) => {
          const tr = state.trips.get(row.trip_id);
          return h(
            'li',
            null,
            h(
              'div',
              null,
              tr ? tr.dropoff_address : row.trip_id.slice(0, 8),
              h('div', { class: 'muted' }, `${fmtTime(row.completed_at)} · ${label(row.status)}`),
            ),
            h('strong', null, row.driver_earning),
          );
        }),
      ),
    ),
    h(
      'section',
      { class: 'd-card' },
      h('h2', null, t('settlementsTitle')),
      state.settlements.length === 0
        ? h('p', { class: 'muted' }, t('nothingPending'))
        : h(
            'ul',
            { class: 'd-list' },
            state.settlements.map((s) =>
              h(
                'li',
                null,
                h(
                  'div',
                  null,
                  `${s.amount} ${s.currency}`,
                  h('div', { class: 'muted' }, `${fmtTime(s.cutoff_at)} · ${count(s.trip_count, 'tripOne', 'trips')}`),
                ),
                h('strong', null, label(s.status)),
              ),
            ),
          ),
    ),
  );
}

// ---------- login ----------

const ROLE_HOME: Record<string, Parameters<typeof t>[0]> = {
  administrator: 'goConsole',
  comercio: 'driverGoMerchant',
  delivery: 'driverGoCustomer',
};

function renderLogin(message?: string) {
  const email = h('input', { id: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const err = h('p', { class: 'error', role: 'alert' }, message ?? '');
  const form = h(
    'form',
    { class: 'login d-login' },
    h('h1', null, t('driverApp')),
    state.sessionLost ? h('p', { class: 'd-banner warn' }, t('sessionLost')) : null,
    h('label', { for: 'email' }, t('email')),
    email,
    h('label', { for: 'password' }, t('password')),
    password,
    h('button', { type: 'submit', class: 'd-big primary' }, t('login')),
    err,
    h(
      'select',
      { 'aria-label': t('language'), onchange: (e: Event) => (setLang((e.target as HTMLSelectElement).value as Lang), renderLogin()) },
      h('option', { value: 'es', selected: getLang() === 'es' }, 'Español'),
      h('option', { value: 'en', selected: getLang() === 'en' }, 'English'),
    ),
  ) as HTMLFormElement;
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (!navigator.onLine) {
      err.textContent = t('loginNeedsNetwork');
      return;
    }
    try {
      const user = await login(email.value.trim(), password.value);
      if (user.role !== 'repartidor') {
        const where =
          user.role === 'administrator' || user.dispatch || user.subadmin ? 'goConsole' : (ROLE_HOME[user.role] ?? 'driverGoCustomer');
        await logout();
        clear(
          root,
          h(
            'div',
            { class: 'login-page' },
            h(
              'div',
              { class: 'login d-login', role: 'alert', 'data-wrong-role': user.role },
              h('h1', null, t('driversOnly')),
              h('p', null, t(where)),
              h('button', { class: 'd-big', onclick: () => renderLogin() }, t('back')),
            ),
          ),
        );
        return;
      }
      state.sessionLost = false;
      await start();
    } catch (x) {
      const p = (x as { problem?: { code?: string; status?: number } }).problem;
      err.textContent =
        p?.status === 401 || p?.status === 400 ? t('badCredentials') : p?.status === 429 ? t('tooManyTries') : t('loginFailed');
    }
  };
  clear(root, h('div', { class: 'login-page' }, form));
  markReady();
}

// ---------- start ----------

function markReady() {
  document.body.dataset.ready = 'true';
  (window as unknown as { driverReadyAt?: number }).driverReadyAt ??= performance.now();
}

async function start() {
  liveUpdates(true);
  await loadCache().catch(() => undefined);
  await loadPending();
  render();
  markReady();
  await sync();
  await refresh();
  render();
}

session.onEnd((why) => {
  liveUpdates(false);
  // The refresh token was refused: the work waiting in the queue stays, for after the next login.
  if (why === 'expired' && document.body.dataset.ready) state.sessionLost = true;
  state.me = null;
  state.trips.clear();
  renderLogin();
});

/** The network changed: the header, the banners and the buttons that need it; a form being filled stays as it is. */
onNetwork((online) => {
  const was = state.online;
  state.online = online;
  if (!session.user()) return;
  const net = document.getElementById('net');
  if (net) {
    net.dataset.online = String(online);
    net.textContent = online ? t('online') : t('offlineNow');
  }
  const duty = document.getElementById('duty') as HTMLButtonElement | null;
  if (duty) duty.disabled = !online || (!state.me?.available && !!state.me?.availability_locked);
  if (online && !was) {
    note('ok', () => t('backOnline'));
    void sync().then(() => flushPoints());
  }
  renderBanners();
});

/** What the page shows, in short: a periodic refresh redraws only when it changed (a PIN being typed is not wiped). */
function fingerprint(): string {
  return JSON.stringify([
    trips().map((tr) => [tr.id, tr.status]),
    state.pending.length,
    state.me?.available,
    state.me?.availability_locked,
    state.notifications.map((n) => [n.id, n.read]),
    state.earnings?.total_earnings,
    state.settlements.length,
    state.cash?.cash_in_hand,
    state.cash?.data[0]?.id,
    trips().map((tr) => tr.recipient_phone ?? ''),
  ]);
}
let shown = '';

installPrompt((install) => {
  state.install = install;
  if (session.user() && state.tab === 'today') render();
});

/** What is waiting goes out, what changed comes in: on an event of the stream, when the phone shows the page again, and by the poll. */
function poll() {
  if (!session.user() || !navigator.onLine) return;
  void sync()
    .then(() => refresh())
    .then(() => {
      if (fingerprint() !== shown) render();
    });
}

/**
 * The poll is the safety net: every 10 s while the event stream is down, every 60 s while it is live. `driver.pollMs`
 * in localStorage sets another interval (a slow test, a phone that must save data).
 */
const POLL_MS = Number(localStorage.getItem('driver.pollMs')) || 0;
let lastPoll = Date.now();
setInterval(() => {
  if (Date.now() - lastPoll < (POLL_MS || (state.live ? 60_000 : 10_000))) return;
  lastPoll = Date.now();
  poll();
}, 1000);
document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && poll());

/** Events that change what the driver sees (his own position updates do not). */
const QUIET = new Set(['trip.location_updated', 'trip.geofence_entered', 'trip.location_stale', 'trip.delayed']);
let pushTimer: ReturnType<typeof setTimeout> | null = null;
let stopStream: (() => void) | null = null;

/** A pushed event: one refresh for a burst of them (after the one under way, which may predate the event: `refresh`). */
function pushed(e: StreamEvent | null) {
  if (e && QUIET.has(e.type)) return;
  if (pushTimer) return;
  pushTimer = setTimeout(() => {
    pushTimer = null;
    lastPoll = Date.now();
    document.body.dataset.pushed = String(Number(document.body.dataset.pushed ?? 0) + 1);
    poll();
  }, 200);
}

/** The driver's own event stream (/realtime/me/stream): an offer, a cancellation, a notification arrive at once; it reconnects with backoff. */
function liveUpdates(on: boolean) {
  if (on && !stopStream) {
    stopStream = openStream('me', {
      event: (e) => pushed(e),
      reset: () => pushed(null),
      state: (live) => {
        state.live = live;
        document.body.dataset.live = String(live);
        const el = document.getElementById('net');
        if (el) el.dataset.live = String(live);
      },
    });
  } else if (!on && stopStream) {
    stopStream();
    stopStream = null;
    state.live = false;
    document.body.dataset.live = 'false';
  }
}

void registerServiceWorker('driver');
if (session.user()) void start();
else renderLogin();
