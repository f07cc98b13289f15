import L from 'leaflet';
import './style.css';
import type { paths } from './api-types';
import { $, clear, h } from './dom';
import { fmtEta, fmtTime, getLang, label, setLang, t } from './i18n';
import { COLORS, createMap, disposeMap, toLatLng } from './map';

/** The recipient's tracking page: status, ETA, the driver on the map while the trip is active, the delivery PIN. No login. */
type Tracking = paths['/api/v1/public/tracking/{token}']['get']['responses'][200]['content']['application/json'];

const STEPS = ['pending', 'assigned', 'accepted', 'picked_up', 'in_transit', 'completed'] as const;
const root = $('#app');
const token = location.pathname.split('/').filter(Boolean).pop() ?? '';
let map: L.Map | null = null;
let marker: L.CircleMarker | null = null;
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
    idx >= 0 ? h('ol', { class: 'steps', 'aria-label': t('status') }, STEPS.map((s, i) => h('li', { class: i <= idx ? 'done' : '', 'aria-current': i === idx ? 'step' : undefined }, label(s)))) : null,
    active && tr.eta_seconds !== null ? h('p', { class: 'eta', id: 't-eta' }, `${t('arrivingIn')} ${fmtEta(tr.eta_seconds)}`) : null,
    h('p', null, `${t('destination')}: ${tr.dropoff_address}`),
    tr.delivery_pin && !['completed', 'cancelled', 'failed', 'returned'].includes(tr.status)
      ? h('div', { class: 'pin' }, h('span', null, t('deliveryPin')), h('strong', { id: 't-pin' }, tr.delivery_pin), h('small', null, t('pinHint')))
      : null,
    h('p', { class: 'muted' }, `${t('updated')}: ${fmtTime(new Date().toISOString())}`),
  );
  const at = toLatLng(tr.driver_location);
  const mapEl = $('#t-map');
  mapEl.hidden = !at;
  mapEl.dataset.driver = at ? `${at[0]},${at[1]}` : '';
  if (map && at) {
    if (!marker) marker = L.circleMarker(at, { radius: 9, color: COLORS.busy, fillColor: COLORS.busy, fillOpacity: 0.9 }).bindTooltip(t('driver')).addTo(map);
    else marker.setLatLng(at);
    map.invalidateSize();
    map.setView(at, map.getZoom());
  }
}

async function tick() {
  let tr: Tracking | null = null;
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
