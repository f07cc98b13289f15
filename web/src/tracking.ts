import L from 'leaflet';
import './style.css';
import type { paths } from './api-types';
import { $, clear, h } from './dom';
import { fmtClock, fmtEta, fmtTime, getLang, label, setLang, t } from './i18n';
import { COLORS, createMap, disposeMap, toLatLng } from './map';

/** The recipient's tracking page: status, ETA, the driver on the map while the trip is active, the delivery PIN. No login. */
type Tracking = paths['/api/v1/public/tracking/{token}']['get']['responses'][200]['content']['application/json'];

const STEPS = ['pending', 'assigned', 'accepted', 'picked_up', 'in_transit', 'completed'] as const;
const root = $('#app');
const token = location.pathname.split('/').filter(Boolean).pop() ?? '';
let map: L.Map | null = null;
let marker: L.CircleMarker | null = null;
let destination: L.CircleMarker | null = null;
let fitted = false;

/**
 * Seconds until the driver reaches the recipient: the live ETA to the drop-off when the server gives it; else the
 * ETA to the next stop only when that stop is the drop-off (heading to the store first, it says so instead).
 */
function toRecipient(tr: Tracking): number | null {
  if (tr.eta_dropoff_at) return Math.max(0, (new Date(tr.eta_dropoff_at).getTime() - Date.now()) / 1000);
  return tr.next_stop === 'dropoff' ? tr.eta_seconds : null;
}
let timer: ReturnType<typeof setTimeout> | null = null;

async function load(): Promise<Tracking | null> {
  const res = await fetch(`/api/v1/public/tracking/${encodeURIComponent(token)}`, { headers: { accept: 'application/json' } });
  if (!res.ok) return null;
  return (await res.json()) as Tracking;
}

function render(tr: Tracking | null) {
  if (!tr) {
    disposeMap(map);
    map = null;
    clear(root, h('h1', null, t('yourDelivery')), h('p', { class: 'error', role: 'alert' }, t('linkInvalid')));
    return;
  }
  const idx = STEPS.indexOf(tr.status as (typeof STEPS)[number]);
  const active = ['assigned', 'accepted', 'picked_up', 'in_transit'].includes(tr.status);
  if (!document.getElementById('t-map')) {
    clear(
      root,
      h(
        'header',
        { class: 't-head' },
        h('h1', null, t('yourDelivery')),
        h(
          'button',
          {
            type: 'button',
            class: 'lang-toggle',
            onclick: () => {
              setLang(getLang() === 'es' ? 'en' : 'es');
              disposeMap(map);
              map = null;
              marker = null;
              destination = null;
              fitted = false;
              clear(root);
              render(tr);
            },
          },
          getLang() === 'es' ? 'English' : 'Español',
        ),
      ),
      h('div', { id: 't-info' }),
      h('div', { id: 't-map', class: 'map t-map', 'aria-label': t('driverOnMap') }),
    );
    map = createMap($('#t-map'), { zoom: 14 });
  }
  clear(
    $('#t-info'),
    tr.organization_name ? h('p', { class: 'org' }, `${t('from')}: ${tr.organization_name}`) : null,
    h('p', { class: 't-status', id: 't-status', 'data-status': tr.status }, h('strong', null, label(tr.status))),
    idx >= 0
      ? h(
          'ol',
          { class: 'steps', 'aria-label': t('status') },
          STEPS.map((s, i) => h('li', { class: i <= idx ? 'done' : '', 'aria-current': i === idx ? 'step' : undefined }, label(s))),
        )
      : null,
    active && toRecipient(tr) !== null ? h('p', { class: 'eta', id: 't-eta' }, `${t('arrivingTo')} ${fmtEta(toRecipient(tr))}`) : null,
    active && tr.next_stop === 'pickup' ? h('p', { id: 't-pickup-first' }, t('toPickupFirst')) : null,
    tr.promised_at && !['cancelled', 'failed', 'returned', 'returning'].includes(tr.status)
      ? h('p', { id: 't-promise' }, `${t('promisedFor')} ${fmtClock(tr.promised_at)}`)
      : null,
    h('p', null, `${t('destination')}: ${tr.dropoff_address}`),
    tr.delivery_pin && !['completed', 'cancelled', 'failed', 'returned'].includes(tr.status)
      ? h(
          'div',
          { class: 'pin' },
          h('span', null, t('deliveryPin')),
          h('strong', { id: 't-pin' }, tr.delivery_pin),
          h('small', null, t('pinHint')),
        )
      : null,
    h('p', { class: 'muted' }, `${t('updated')}: ${fmtTime(new Date().toISOString())}`),
  );
  const at = toLatLng(tr.driver_location);
  const dest = toLatLng(tr.dropoff_location);
  const mapEl = $('#t-map');
  mapEl.hidden = !at;
  mapEl.dataset.driver = at ? `${at[0]},${at[1]}` : '';
  mapEl.dataset.destination = dest ? `${dest[0]},${dest[1]}` : '';
  if (map && at) {
    if (!marker)
      marker = L.circleMarker(at, { radius: 9, color: COLORS.busy, fillColor: COLORS.busy, fillOpacity: 0.9 })
        .bindTooltip(t('driver'))
        .addTo(map);
    else marker.setLatLng(at);
    // The recipient's address: a marker of its own, so "how far" reads off the map.
    if (dest && !destination)
      destination = L.circleMarker(dest, { radius: 10, color: COLORS.dropoff, fillColor: '#fff', fillOpacity: 1, weight: 4 })
        .bindTooltip(t('yourAddress'), { permanent: true, direction: 'top' })
        .addTo(map);
    map.invalidateSize();
    if (dest && !fitted) {
      map.fitBounds(L.latLngBounds([at, dest]), { padding: [40, 40], maxZoom: 16 });
      fitted = true;
    } else if (!dest) map.setView(at, map.getZoom());
  }
}

async function tick() {
  let tr: Tracking | null;
  try {
    tr = await load();
  } catch {
    /* offline: keep what is shown and retry */
    timer = setTimeout(tick, 15_000);
    return;
  }
  render(tr);
  const live = tr && !['completed', 'cancelled', 'failed', 'returned'].includes(tr.status);
  if (live) timer = setTimeout(tick, 10_000);
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && timer) {
    clearTimeout(timer);
    void tick();
  }
});
void tick();
