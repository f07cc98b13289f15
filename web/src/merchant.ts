import './style.css';
import { api, keepSessionIn, login, logout, ok, session, type Trip } from './api';
import { $, clear, h } from './dom';
import { fmtClock, fmtTime, getLang, label, setLang, t, tf, windowsLoadRows, type Lang } from './i18n';
import { installPrompt, registerServiceWorker } from './pwa';
import { openStream, type StreamEvent } from './sse';
import { renderExpress } from './merchant-express';
import { renderOnlineShop } from './merchant-online-shop';
import { renderMoney, renderPayments, renderCoupons } from './merchant-money';
import { renderBranches, renderCatalog } from './merchant-shop';
import { fail, fmtMoney, toast } from './merchant-ui';

/**
 * The merchant's counter (/merchant): a tablet or laptop in the shop. Incoming orders live from the merchant's own
 * event stream (resumed after a break), ringing until seen; accept, reject, mark ready; the trip's progress.
 * Express deliveries, catalog and branches, coupons and direct payments, money: one view each.
 */

keepSessionIn(localStorage, 'merchant.session');

const listOrders = (query: { status?: import('./api').Schemas['Order']['status']; limit: number }) =>
  ok(api.GET('/api/v1/merchant/orders', { params: { query } }));
type Order = Awaited<ReturnType<typeof listOrders>>['data'][number];
const root = $('#app');
const VIEWS = ['orders', 'express', 'onlineShop', 'catalog', 'branches', 'coupons', 'payments', 'money'] as const;
type View = (typeof VIEWS)[number];
const OPEN: Order['status'][] = ['pending_confirmation', 'confirmed', 'preparing', 'ready', 'in_delivery', 'delivery_failed'];
const PREP_MINUTES = [10, 15, 20, 30, 45, 60, 90];
/** An order not on its way this close to its promise is at risk of being late. */
const RISK_MARGIN_MS = 10 * 60_000;

const state = {
  orders: new Map<string, Order>(),
  trips: new Map<string, Trip>(),
  live: false,
  tab: 'open' as 'open' | 'history',
  /** Each branch's usual preparation time (the accept form starts from it). */
  prepByBranch: new Map<string, number>(),
  /** What the merchant has chosen or typed on a card not yet answered: a redraw (a live event) must not undo it. */
  drafts: new Map<string, { prep?: number; reason?: string }>(),
};

/* ---------------- ringing: a new order rings until it is seen ---------------- */

const SEEN_KEY = 'merchant.seen';
const seen = new Set<string>(
  (() => {
    try {
      return JSON.parse(localStorage.getItem(SEEN_KEY) ?? '[]') as string[];
    } catch {
      return [];
    }
  })(),
);
function markSeen(ids: Iterable<string>) {
  for (const id of ids) seen.add(id);
  // Only the recent ones matter: keep the list short.
  localStorage.setItem(SEEN_KEY, JSON.stringify([...seen].slice(-500)));
  drawRinging();
}
const unseen = () => [...state.orders.values()].filter((o) => o.status === 'pending_confirmation' && !seen.has(o.id));

let audio: AudioContext | null = null;
let ringTimer: ReturnType<typeof setInterval> | null = null;
function beep() {
  try {
    audio ??= new AudioContext();
    if (audio.state === 'suspended') void audio.resume();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.25, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.6);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.6);
  } catch {
    /* no audio: the banner still flashes */
  }
}

function drawRinging() {
  const list = unseen();
  const el = document.getElementById('ringing');
  if (el) {
    el.hidden = list.length === 0;
    el.dataset.count = String(list.length);
    const text = el.querySelector('.ring-text');
    if (text) text.textContent = `${t('newOrder')} (${list.length})`;
  }
  if (list.length && !ringTimer) {
    beep();
    ringTimer = setInterval(beep, 2000);
  } else if (!list.length && ringTimer) {
    clearInterval(ringTimer);
    ringTimer = null;
  }
  document.title = list.length ? `(${list.length}) ${t('newOrder')}` : t('counterTitle');
}

/* ---------------- login: merchant users only ---------------- */

function langPicker(onChange: () => void) {
  const sel = h(
    'select',
    { id: 'lang', 'aria-label': t('language') },
    h('option', { value: 'es', selected: getLang() === 'es' }, 'Español'),
    h('option', { value: 'en', selected: getLang() === 'en' }, 'English'),
  );
  sel.addEventListener('change', () => {
    setLang(sel.value as Lang);
    onChange();
  });
  return sel;
}

let stopStream: (() => void) | null = null;

function renderLogin(message: string | null = null) {
  stopStream?.();
  stopStream = null;
  if (ringTimer) clearInterval(ringTimer);
  ringTimer = null;
  document.title = t('counterTitle');
  const err = h('p', { class: 'error', role: 'alert', id: 'login-error' }, message ?? '');
  const form = h(
    'form',
    { class: 'login', 'aria-labelledby': 'login-title' },
    h('h1', { id: 'login-title' }, t('counterTitle')),
    h('label', { for: 'email' }, t('email')),
    h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true }),
    h('label', { for: 'password' }, t('password')),
    h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
    h('button', { type: 'submit', class: 'primary' }, t('login')),
    err,
    langPicker(() => renderLogin(message)),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    try {
      const user = await login(String(data.get('email')), String(data.get('password')));
      if (user.role !== 'comercio') {
        await logout();
        renderLogin(t('merchantOnly'));
        return;
      }
      beep(); // the login click lets the page play sound later
      renderShell();
    } catch (e) {
      err.textContent = `${t('loginFailed')}: ${(e as { problem?: unknown }).problem ? t('errBadInput') : t('errOffline')}`;
    }
  });
  clear(root, h('main', { id: 'main', class: 'login-page' }, form));
  ($('#email', form) as HTMLInputElement).focus();
}

session.onEnd(() => renderLogin());

/* ---------------- shell ---------------- */

const currentView = (): View => {
  const v = location.hash.replace(/^#\//, '') as View;
  return VIEWS.includes(v) ? v : 'orders';
};

function renderShell() {
  const user = session.user();
  if (!user) return renderLogin();
  if (user.role !== 'comercio') {
    void logout();
    return renderLogin(t('merchantOnly'));
  }
  const view = currentView();
  const tab = (id: View) => h('a', { href: `#/${id}`, class: 'tab', 'aria-current': view === id ? 'page' : undefined }, t(id));
  clear(
    root,
    h(
      'header',
      { class: 'top' },
      h('strong', { class: 'brand', id: 'brand' }, session.user()?.display_name ?? t('counterTitle')),
      h('nav', { 'aria-label': t('counterTitle') }, VIEWS.map(tab)),
      h('span', { class: 'live', id: 'live', 'data-live': String(state.live) }, state.live ? t('live') : t('reconnecting')),
      h('button', { type: 'button', id: 'install', hidden: !install, onclick: () => void install?.() }, t('installApp')),
      langPicker(renderShell),
      h('button', { type: 'button', id: 'logout', onclick: () => void logout() }, t('logout')),
    ),
    h(
      'div',
      { id: 'ringing', class: 'ringing', hidden: true, role: 'alert' },
      h('span', { class: 'ring-text' }, t('newOrder')),
      h('button', { type: 'button', id: 'seen', class: 'primary', onclick: () => markSeen(unseen().map((o) => o.id)) }, t('seen')),
    ),
    h('main', { id: 'main', tabindex: '-1' }),
    h('div', { id: 'toasts', class: 'toasts', 'aria-live': 'polite' }),
  );
  drawRinging();
  const main = $('#main');
  if (view === 'express') void renderExpress(main);
  else if (view === 'onlineShop') void renderOnlineShop(main);
  else if (view === 'catalog') void renderCatalog(main);
  else if (view === 'branches') void renderBranches(main);
  else if (view === 'coupons') void renderCoupons(main);
  else if (view === 'payments') void renderPayments(main);
  else if (view === 'money') void renderMoney(main);
  else renderOrders(main);
  if (!stopStream) start();
}

window.addEventListener('hashchange', () => session.user() && renderShell());

/** Loads the orders and opens the merchant's stream (once per session; views come and go). */
function start() {
  void loadOrders();
  void ok(api.GET('/api/v1/merchant/branches', { params: { query: { limit: 200 } } })).then(
    (page) => {
      for (const b of page.data) state.prepByBranch.set(b.id, b.preparation_min);
      if (!document.getElementById('orders')?.contains(document.activeElement)) drawOrders();
    },
    () => undefined,
  );
  stopStream = openStream('me', {
    event: onEvent,
    reset: () => void loadOrders(),
    state: (live) => {
      const wasLive = state.live;
      state.live = live;
      const el = document.getElementById('live');
      if (el) {
        el.dataset.live = String(live);
        el.textContent = live ? t('live') : t('reconnecting');
      }
      // Back after a break: the stream replays what it missed, and the list is refetched as well (nothing lost, nothing doubled: keyed by id).
      if (live && !wasLive) void loadOrders();
    },
  });
}

/* ---------------- orders ---------------- */

let loading: Promise<void> | null = null;
/** A refetch asked for while one is running: the running one started before the change, so one more follows it (nothing missed). */
let again = false;
async function loadOrders(): Promise<void> {
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    do {
      again = false;
      try {
        const [open, recent] = await Promise.all([
          Promise.all(OPEN.map((status) => listOrders({ status, limit: 100 }))),
          listOrders({ limit: 50 }),
        ]);
        for (const o of [...open.flatMap((p) => p.data), ...recent.data]) state.orders.set(o.id, o);
        await Promise.all([...state.orders.values()].filter((o) => o.trip_id && OPEN.includes(o.status)).map((o) => loadTrip(o.trip_id!)));
        drawOrders();
      } catch (e) {
        fail(e);
      }
    } while (again);
  })().finally(() => (loading = null));
  return loading;
}

async function loadTrip(id: string) {
  try {
    state.trips.set(id, await ok(api.GET('/api/v1/trips/{id}', { params: { path: { id } } })));
  } catch {
    /* gone */
  }
}

const pendingRefetch = new Map<string, ReturnType<typeof setTimeout>>();
function onEvent(e: StreamEvent) {
  if (e.entity_type === 'merchant_order') {
    // The event says what changed; the list is refetched (a burst of events is one request), keyed by id.
    clearTimeout(pendingRefetch.get('orders'));
    pendingRefetch.set(
      'orders',
      setTimeout(() => void loadOrders(), 150),
    );
    return;
  }
  if (e.entity_type === 'trip') {
    clearTimeout(pendingRefetch.get(e.entity_id));
    pendingRefetch.set(
      e.entity_id,
      setTimeout(async () => {
        await loadTrip(e.entity_id);
        const o = [...state.orders.values()].find((x) => x.trip_id === e.entity_id);
        if (o && ['trip.delivery_failed', 'trip.returned', 'trip.completed', 'trip.pickup_verified', 'trip.cancelled'].includes(e.type))
          await loadOrders();
        else drawOrders();
      }, 150),
    );
  }
}

function renderOrders(main: HTMLElement) {
  const tab = (id: 'open' | 'history', text: string) =>
    h(
      'button',
      { type: 'button', class: 'subtab', 'aria-pressed': String(state.tab === id), onclick: () => ((state.tab = id), renderOrders(main)) },
      text,
    );
  clear(
    main,
    h(
      'section',
      { class: 'orders-page', 'aria-labelledby': 'orders-title' },
      h('h1', { id: 'orders-title', class: 'sr-only' }, t('orders')),
      h('div', { class: 'subtabs' }, tab('open', t('activeOrders')), tab('history', t('history'))),
      h('div', { id: 'orders', class: 'orders' }),
    ),
  );
  drawOrders();
}

function drawOrders() {
  drawRinging();
  const box = document.getElementById('orders');
  if (!box) return;
  const list = [...state.orders.values()]
    .filter((o) => (state.tab === 'open' ? OPEN.includes(o.status) : !OPEN.includes(o.status)))
    .sort((a, b) => (state.tab === 'open' ? rank(a) - rank(b) || a.id.localeCompare(b.id) : b.id.localeCompare(a.id)));
  box.dataset.count = String(list.length);
  clear(box, list.length ? list.map(orderCard) : h('p', { class: 'muted' }, t('noOrders')));
}

const rank = (o: Order) => (OPEN.indexOf(o.status) === 5 ? -1 : OPEN.indexOf(o.status));

function collectText(o: Order): string {
  if (o.payment_destination === 'cash') return tf('collectCash', { amount: fmtMoney(o.total, o.currency) });
  if (o.payment_destination === 'merchant_direct') return tf('collectDirect', { status: label(o.payment_status) });
  return t('collectNothing');
}

const promiseOf = (o: Order, trip?: Trip): string | null => o.promised_at ?? trip?.promised_at ?? null;

/**
 * Whether an open order will miss its promise: `late` once the promise has passed; `at_risk` when the driver's ETA to the
 * customer is after it, or when the order is not on its way yet and the promise is less than RISK_MARGIN_MS away.
 */
export function riskOf(
  o: Pick<Order, 'status' | 'promised_at'>,
  trip: Pick<Trip, 'promised_at' | 'eta_dropoff_at'> | undefined,
  now = Date.now(),
): 'late' | 'at_risk' | null {
  if (!['pending_confirmation', 'confirmed', 'preparing', 'ready', 'in_delivery'].includes(o.status)) return null;
  const promised = o.promised_at ?? trip?.promised_at;
  if (!promised) return null;
  const p = new Date(promised).getTime();
  if (now > p) return 'late';
  if (trip?.eta_dropoff_at && new Date(trip.eta_dropoff_at).getTime() > p) return 'at_risk';
  if (o.status !== 'in_delivery' && p - now < RISK_MARGIN_MS) return 'at_risk';
  return null;
}

/** The order's promise ("prometido 13:45") and, when it is in danger, a mark saying so. */
function promiseLine(o: Order, trip?: Trip): HTMLElement | null {
  const promised = promiseOf(o, trip);
  if (!promised) return null;
  const risk = riskOf(o, trip);
  return h(
    'p',
    { class: 'promise-line', 'data-risk': risk ?? '' },
    h('time', { class: 'promised-at', datetime: promised }, tf('promisedAt', { time: fmtClock(promised) })),
    risk ? h('strong', { class: `risk ${risk}`, role: 'status' }, risk === 'late' ? t('lateNow') : t('atRisk')) : null,
    o.preparation_min ? h('span', { class: 'muted prep-given' }, tf('prepGiven', { n: o.preparation_min })) : null,
  );
}

/** The risk marks follow the clock between redraws (a redraw would wipe what the merchant is typing). */
function refreshRisk() {
  for (const card of document.querySelectorAll<HTMLElement>('article.order[data-order-id]')) {
    const o = state.orders.get(card.dataset.orderId!);
    const line = card.querySelector('.promise-line');
    if (!o || !line) continue;
    const trip = o.trip_id ? state.trips.get(o.trip_id) : undefined;
    if ((line as HTMLElement).dataset.risk !== (riskOf(o, trip) ?? '')) line.replaceWith(promiseLine(o, trip)!);
  }
}
setInterval(refreshRisk, 30_000);

function orderCard(o: Order): HTMLElement {
  const trip = o.trip_id ? state.trips.get(o.trip_id) : undefined;
  const isNew = o.status === 'pending_confirmation' && !seen.has(o.id);
  const failed = o.status === 'delivery_failed' || trip?.status === 'returning' || trip?.status === 'failed';
  return h(
    'article',
    {
      class: `order${isNew ? ' new' : ''}${failed ? ' failed' : ''}`,
      'data-order-id': o.id,
      'data-status': o.status,
      'aria-labelledby': `o-${o.id}`,
    },
    h(
      'header',
      null,
      h('h2', { id: `o-${o.id}` }, `#${o.id.slice(-6).toUpperCase()}`),
      h('span', { class: `badge s-${o.status}` }, label(o.status)),
      h('time', { datetime: o.created_at }, fmtTime(o.created_at)),
    ),
    OPEN.includes(o.status) ? promiseLine(o, trip) : null,
    h(
      'ul',
      { class: 'lines', 'aria-label': t('items') },
      o.items.map((l) =>
        h(
          'li',
          null,
          h('strong', null, `${l.quantity} ×`),
          ` ${l.name}`,
          h('span', { class: 'amount' }, fmtMoney(l.line_total, o.currency)),
        ),
      ),
    ),
    o.notes ? h('p', { class: 'notes' }, h('strong', null, `${t('notes')}: `), o.notes) : null,
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, t('total')),
      h(
        'dd',
        null,
        fmtMoney(o.total, o.currency),
        o.discount_total !== '0.00' ? h('span', { class: 'muted' }, ` (${t('discount')} ${fmtMoney(o.discount_total, o.currency)})`) : null,
      ),
      h('dt', null, t('payment')),
      h('dd', { class: 'destination' }, label(o.payment_destination)),
      h('dt', null, t('toCollect')),
      h('dd', { class: 'collect' }, collectText(o)),
      h('dt', null, t('dropoff')),
      h('dd', null, o.dropoff_address),
      windowsLoadRows(o).flatMap(([term, value]) => [h('dt', null, term), h('dd', { class: 'window-load' }, value)]),
    ),
    failed
      ? h(
          'p',
          { class: 'failure', role: 'status' },
          h('strong', null, t('deliveryFailed')),
          trip?.failure_reason ? `: ${label(trip.failure_reason)}` : o.status_reason ? `: ${o.status_reason}` : '',
          trip?.failure_note ? ` — ${trip.failure_note}` : '',
          trip?.status === 'returning' ? ` · ${t('comingBack')}` : '',
        )
      : null,
    trip ? tripProgress(trip) : null,
    actions(o),
  );
}

const STEPS: Trip['status'][] = ['pending', 'assigned', 'accepted', 'picked_up', 'in_transit', 'completed'];
function tripProgress(tr: Trip): HTMLElement {
  const at = STEPS.indexOf(tr.status);
  return h(
    'div',
    { class: 'trip', 'data-trip-id': tr.id, 'data-trip-status': tr.status },
    h(
      'ol',
      { class: 'steps', 'aria-label': t('trip') },
      STEPS.map((s, i) =>
        h('li', { class: at >= 0 && i < at ? 'done' : undefined, 'aria-current': i === at ? 'step' : undefined }, label(s)),
      ),
    ),
    at < 0 ? h('p', { class: 'badge' }, label(tr.status)) : null,
    tr.pickup_pin && ['pending', 'assigned', 'accepted'].includes(tr.status)
      ? h('p', { class: 'pin-inline' }, `${t('pickupPin')}: `, h('strong', null, tr.pickup_pin))
      : null,
    etaOf(tr),
  );
}

/** The driver's live ETA to the shop (while he is on his way to it); the promise is on the card's head. */
function etaOf(tr: Trip): HTMLElement | null {
  const toShop = tr.eta_pickup_at && ['assigned', 'accepted'].includes(tr.status) ? tr.eta_pickup_at : null;
  if (!toShop) return null;
  return h('dl', { class: 'facts promise' }, h('dt', null, t('driverEta')), h('dd', { class: 'eta-pickup' }, fmtClock(toShop)));
}

async function move(o: Order, status: Order['status'], extra: { reason?: string; preparation_min?: number } = {}) {
  try {
    const next = await ok(api.PATCH('/api/v1/merchant/orders/{id}/status', { params: { path: { id: o.id } }, body: { status, ...extra } }));
    state.orders.set(next.id, next);
    if (next.trip_id) await loadTrip(next.trip_id);
    drawOrders();
    return next;
  } catch (e) {
    fail(e);
    if ((e as { problem?: { status: number } }).problem?.status === 409) void loadOrders();
    return null;
  }
}

function actions(o: Order): HTMLElement | null {
  if (o.status === 'pending_confirmation') {
    // The branch's usual time is chosen first; the merchant changes it for this order.
    const draft = state.drafts.get(o.id) ?? {};
    const chosen = draft.prep ?? state.prepByBranch.get(o.branch_id) ?? 20;
    const choices = [...new Set([...PREP_MINUTES, chosen])].sort((a, b) => a - b);
    const prep = h(
      'select',
      { 'aria-label': t('prepTime'), class: 'prep' },
      choices.map((m) => h('option', { value: m, selected: m === chosen }, `${m} ${t('minutes')}`)),
    );
    const reason = h('input', {
      type: 'text',
      class: 'reason',
      maxlength: 500,
      'aria-label': t('rejectReason'),
      placeholder: t('rejectReason'),
      value: draft.reason ?? '',
    });
    const keep = () => state.drafts.set(o.id, { prep: Number(prep.value), reason: reason.value });
    prep.addEventListener('change', keep);
    reason.addEventListener('input', keep);
    return h(
      'div',
      { class: 'actions' },
      h('label', { class: 'inline' }, t('prepTime'), prep),
      h(
        'button',
        {
          type: 'button',
          class: 'primary accept',
          onclick: async () => {
            markSeen([o.id]);
            const next = await move(o, 'confirmed', { preparation_min: Number(prep.value) });
            if (next) {
              state.drafts.delete(o.id);
              await move(next, 'preparing');
            }
          },
        },
        t('accept'),
      ),
      reason,
      h(
        'button',
        {
          type: 'button',
          class: 'danger reject',
          onclick: async () => {
            if (!reason.value.trim()) return toast(t('reasonRequired'), 'error');
            markSeen([o.id]);
            if (await move(o, 'cancelled', { reason: reason.value.trim() })) state.drafts.delete(o.id);
          },
        },
        t('reject'),
      ),
    );
  }
  if (o.status === 'confirmed')
    return h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'primary', onclick: () => void move(o, 'preparing') }, t('startPreparing')),
    );
  if (o.status === 'preparing')
    return h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'primary ready', onclick: () => void move(o, 'ready') }, t('markReady')),
    );
  return null;
}

/* ---------------- start ---------------- */

// Installable like the driver app: the shared service worker keeps the shell for a restart without network.
let install: (() => Promise<void>) | null = null;
installPrompt((fn) => {
  install = fn;
  const b = document.getElementById('install');
  if (b) b.hidden = false;
});
void registerServiceWorker('merchant');

if (session.user()) renderShell();
else renderLogin();
