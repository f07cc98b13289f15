import type L from 'leaflet';
import { all, api, ok, type Trip } from './api';
import { clear, h } from './dom';
import { fmtTime, label, t, windowsLoadRows } from './i18n';
import { fail, field, fmtMoney, formError, parseMoney, toast } from './merchant-ui';

/** Express deliveries (the courier mode): a new one with the recipient's phone, the list with each trip, the recipient's tracking link to share. */

const listExpress = () => ok(api.GET('/api/v1/merchant/delivery-express', { params: { query: { limit: 50 } } }));
type Express = Awaited<ReturnType<typeof listExpress>>['data'][number];
let map: L.Map | null = null;
/** The map code (Leaflet, about 40 KB compressed) is fetched the first time a map is shown, not with the counter. */
const mapCode = () => import('./map');

export async function renderExpress(main: HTMLElement): Promise<void> {
  if (map) (await mapCode()).disposeMap(map);
  map = null;
  const list = h('div', { id: 'express-list', class: 'cards' });
  const form = expressForm(() => void drawList(list));
  const mapEl = h('div', { id: 'express-map', class: 'map small-map', 'aria-label': t('pickOnMap') });
  clear(
    main,
    h(
      'div',
      { class: 'two-cols' },
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'express-new' },
        h('h1', { id: 'express-new' }, t('newExpress')),
        form,
        h('p', { class: 'muted' }, t('pickOnMap')),
        mapEl,
      ),
      h('section', { class: 'panel', 'aria-labelledby': 'express-title' }, h('h1', { id: 'express-title' }, t('express')), list),
    ),
  );
  const [branches] = await Promise.all([
    all((cursor) => ok(api.GET('/api/v1/merchant/branches', { params: { query: { limit: 200, cursor, active: true } } })), 500).catch(
      () => [],
    ),
    drawList(list),
    showMap(mapEl, form),
  ]);
  const sel = form.querySelector('#x-branch') as HTMLSelectElement;
  for (const b of branches) sel.append(h('option', { value: b.id }, b.name));
  const shown = map as L.Map | null; // set by showMap
  if (branches[0] && shown) shown.setView([branches[0].location.coordinates[1], branches[0].location.coordinates[0]], 14);
}

/** The map to pick the drop-off on (the form still takes typed coordinates while it loads or when it cannot). */
async function showMap(mapEl: HTMLElement, form: HTMLFormElement): Promise<void> {
  try {
    const { createMap } = await mapCode();
    if (!mapEl.isConnected) return; // the merchant left the view meanwhile
    map = createMap(mapEl);
    map.setView([-16.5, -68.13], 13);
    map.on('click', (ev: L.LeafletMouseEvent) => {
      (form.querySelector('#x-lat') as HTMLInputElement).value = ev.latlng.lat.toFixed(6);
      (form.querySelector('#x-lon') as HTMLInputElement).value = ev.latlng.lng.toFixed(6);
    });
  } catch {
    mapEl.hidden = true;
  }
}

function expressForm(done: () => void): HTMLFormElement {
  const input = (type = 'text', attrs: Record<string, unknown> = {}) => h('input', { type, ...attrs });
  const form = h(
    'form',
    { class: 'form', id: 'express-form', novalidate: true },
    field('x-name', t('recipientName'), input('text', { required: true, maxlength: 120, autocomplete: 'off' })),
    field('x-phone', t('recipientPhone'), input('tel', { required: true, autocomplete: 'off' })),
    field('x-address', t('dropoffAddress'), input('text', { required: true, maxlength: 300 })),
    h(
      'div',
      { class: 'row' },
      field('x-lat', t('latitude'), input('text', { inputmode: 'decimal' })),
      field('x-lon', t('longitude'), input('text', { inputmode: 'decimal' })),
    ),
    field('x-branch', t('branch'), h('select', null)),
    field('x-package', t('packageDescription'), input('text', { maxlength: 1000 })),
    field('x-value', t('declaredValue'), input('text', { inputmode: 'decimal', placeholder: '0.00' })),
    h('button', { type: 'submit', class: 'primary' }, t('create')),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement).value.trim();
    const lat = Number(v('x-lat'));
    const lon = Number(v('x-lon'));
    if (!v('x-name')) return formError(form, t('nameRequired'));
    if (!v('x-phone')) return formError(form, t('phoneRequired'));
    if (!v('x-address')) return formError(form, t('dropoffAddress'));
    if (!v('x-lat') || !v('x-lon') || !Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180)
      return formError(form, t('pointRequired'));
    const declared = v('x-value') ? parseMoney(v('x-value')) : '0';
    if (declared === null) return formError(form, t('badPrice'));
    formError(form, null);
    try {
      await ok(
        api.POST('/api/v1/merchant/delivery-express', {
          body: {
            customer_name: v('x-name'),
            customer_phone: v('x-phone'),
            dropoff_address: v('x-address'),
            dropoff_location: { type: 'Point', coordinates: [lon, lat] },
            ...(v('x-branch') ? { branch_id: v('x-branch') } : {}),
            ...(v('x-package') ? { package_description: v('x-package') } : {}),
            ...(declared !== '0' ? { declared_value: declared } : {}),
          },
        }),
      );
      form.reset();
      toast(t('saved'));
      done();
    } catch (e) {
      fail(e);
    }
  });
  return form;
}

async function drawList(box: HTMLElement) {
  try {
    const page = await listExpress();
    const trips = new Map(
      (
        await Promise.all(
          page.data
            .filter((x) => x.trip_id)
            .map((x) => ok(api.GET('/api/v1/trips/{id}', { params: { path: { id: x.trip_id! } } })).catch(() => null)),
        )
      )
        .filter((x) => !!x)
        .map((tr) => [tr!.id, tr!]),
    );
    clear(
      box,
      page.data.length
        ? page.data.map((x) => card(x, x.trip_id ? trips.get(x.trip_id) : undefined))
        : h('p', { class: 'muted' }, t('nothingYet')),
    );
  } catch (e) {
    fail(e);
  }
}

function card(x: Express, trip: Trip | undefined) {
  const windowsLoad = windowsLoadRows(x);
  return h(
    'article',
    { class: 'card-x', 'data-express-id': x.id, 'data-trip-id': x.trip_id ?? '' },
    h(
      'header',
      null,
      h('strong', null, x.customer_name),
      h('span', { class: 'badge' }, label(trip?.status ?? x.status)),
      h('time', null, fmtTime(x.created_at)),
    ),
    h('p', null, x.customer_phone ?? '—', ' · ', x.dropoff_address),
    h(
      'p',
      { class: 'muted' },
      `${t('fee')}: ${fmtMoney(x.delivery_fee)}`,
      trip?.pickup_pin && ['pending', 'assigned', 'accepted'].includes(trip.status) ? ` · ${t('pickupPin')}: ${trip.pickup_pin}` : '',
    ),
    windowsLoad.length
      ? h(
          'dl',
          { class: 'facts' },
          windowsLoad.flatMap(([term, value]) => [h('dt', null, term), h('dd', { class: 'window-load' }, value)]),
        )
      : null,
    trip?.failure_reason ? h('p', { class: 'failure' }, `${t('deliveryFailed')}: ${label(trip.failure_reason)}`) : null,
    x.trip_id
      ? h('button', { type: 'button', class: 'share', onclick: () => void share(x.trip_id!, x.customer_phone) }, t('shareLink'))
      : null,
    h('output', { class: 'link' }),
  );
}

/** The recipient's tracking link: the current one, else a new one; shared with the system sheet, else copied. */
async function share(tripId: string, phone: string | null) {
  try {
    const current = await api.GET('/api/v1/trips/{id}/recipient-link', { params: { path: { id: tripId } } });
    const link =
      current.response.ok && current.data
        ? current.data
        : await ok(
            api.POST('/api/v1/trips/{id}/recipient-link', {
              params: { path: { id: tripId } },
              body: phone ? { recipient_phone: phone } : {},
            }),
          );
    const url = new URL(link.url, location.origin).toString();
    const out = document.querySelector(`[data-trip-id="${tripId}"] output.link`);
    if (out) out.textContent = url;
    if (navigator.share) await navigator.share({ title: t('tracking'), url }).catch(() => undefined);
    else if (navigator.clipboard)
      await navigator.clipboard.writeText(url).then(
        () => toast(t('linkCopied')),
        () => undefined,
      );
  } catch (e) {
    fail(e);
  }
}
