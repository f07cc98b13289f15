import './console-hubs.css';
import { all, api, ok, session, type Hub } from './api';
import { clear, h } from './dom';
import { errorText, t, tf, type Key } from './i18n';

/**
 * The console's hubs view (#/hubs): the organization's hubs (places where planned routes may start and end) with their
 * opening hours. Administrators and sub-administrators (their territories' hubs: the API confines) create, change and
 * delete them; dispatch reads.
 */

/** Monday first, as the week is read here; the API's weekday numbers (0 = Sunday). */
const WEEK = [1, 2, 3, 4, 5, 6, 0];
const dayName = (d: number) => t(`day${d}` as Key);

export const listHubs = () => all((cursor) => ok(api.GET('/api/v1/hubs', { params: { query: { limit: 200, cursor } } })), 1000);

const hoursText = (hub: Hub) =>
  hub.opening_hours.length === 0
    ? t('hubAlwaysOpen')
    : WEEK.map((d) => {
        const x = hub.opening_hours.find((o) => o.day === d);
        return `${dayName(d).slice(0, 3)} ${x ? `${x.open}–${x.close}` : t('hubClosedDay')}`;
      }).join(' · ');

export async function renderHubs(main: HTMLElement, toast: (message: string, kind?: 'info' | 'error') => void) {
  const kind = session.user()?.kind;
  const canWrite = kind === 'administrator' || kind === 'platform' || kind === 'subadmin';
  const fail = (e: unknown) => toast(`${t('error')}: ${errorText(e)}`, 'error');
  const list = h(
    'section',
    { class: 'hub-list', id: 'hub-list', 'aria-labelledby': 'hub-list-title' },
    h('h2', { id: 'hub-list-title' }, t('hubsTitle')),
  );
  const formBox = h('div', { id: 'hub-form-box' });
  clear(main, h('div', { class: 'hubs-page' }, list, canWrite ? formBox : null));

  async function refresh() {
    const hubs = await listHubs();
    clear(
      list,
      h('h2', { id: 'hub-list-title' }, t('hubsTitle')),
      hubs.length === 0
        ? h('p', null, t('hubsNone'))
        : h(
            'ul',
            null,
            hubs.map((hub) =>
              h(
                'li',
                { 'data-hub-id': hub.id },
                h(
                  'button',
                  { type: 'button', disabled: !canWrite, onclick: () => edit(hub) },
                  h('strong', null, hub.name, hub.active ? '' : ` (${t('hubInactive')})`),
                  h('span', { class: 'where' }, hub.address),
                  h('span', { class: 'hours' }, hoursText(hub)),
                ),
              ),
            ),
          ),
    );
  }

  function edit(hub: Hub | null) {
    const field = (id: string, text: string, input: HTMLElement) => h('label', { for: id }, text, input);
    const name = h('input', { id: 'hub-name', type: 'text', required: true, maxlength: '120', value: hub?.name ?? '' });
    const address = h('input', { id: 'hub-address', type: 'text', required: true, maxlength: '300', value: hub?.address ?? '' });
    const [lng, lat] = hub?.location.coordinates ?? [];
    const latIn = h('input', { id: 'hub-lat', type: 'number', step: 'any', min: '-90', max: '90', required: true, value: lat ?? '' });
    const lngIn = h('input', { id: 'hub-lng', type: 'number', step: 'any', min: '-180', max: '180', required: true, value: lng ?? '' });
    const active = h('input', { id: 'hub-active', type: 'checkbox', checked: hub?.active ?? true });
    const rows = WEEK.map((d) => {
      const x = hub?.opening_hours.find((o) => o.day === d);
      return {
        day: d,
        on: h('input', {
          type: 'checkbox',
          id: `hub-day-${d}`,
          checked: hub ? !!x : d !== 0,
          'aria-label': `${t('hubOpenDay')} ${dayName(d)}`,
        }),
        open: h('input', { type: 'time', id: `hub-open-${d}`, value: x?.open ?? '08:00', 'aria-label': `${dayName(d)} ${t('hubOpens')}` }),
        close: h('input', {
          type: 'time',
          id: `hub-close-${d}`,
          value: x?.close ?? '18:00',
          'aria-label': `${dayName(d)} ${t('hubCloses')}`,
        }),
      };
    });
    const form = h(
      'form',
      { class: 'hub-form', id: 'hub-form', 'aria-labelledby': 'hub-form-title' },
      h('h2', { id: 'hub-form-title' }, hub ? t('hubEdit') : t('hubNew')),
      field('hub-name', t('hubName'), name),
      field('hub-address', t('hubAddress'), address),
      h('div', { class: 'coords' }, field('hub-lat', t('hubLat'), latIn), field('hub-lng', t('hubLng'), lngIn)),
      h(
        'fieldset',
        null,
        h('legend', null, t('hubHours')),
        h(
          'table',
          null,
          h(
            'thead',
            null,
            h('tr', null, h('th', null, ''), h('th', null, t('hubOpenDay')), h('th', null, t('hubOpens')), h('th', null, t('hubCloses'))),
          ),
          h(
            'tbody',
            null,
            rows.map((r) =>
              h('tr', null, h('th', { scope: 'row' }, dayName(r.day)), h('td', null, r.on), h('td', null, r.open), h('td', null, r.close)),
            ),
          ),
        ),
      ),
      h('label', { for: 'hub-active', class: 'inline' }, active, ` ${t('hubActive')}`),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', id: 'hub-save' }, t('hubSave')),
        hub ? h('button', { type: 'button', id: 'hub-delete', onclick: () => void remove(hub) }, t('hubDelete')) : null,
        hub ? h('button', { type: 'button', onclick: () => edit(null) }, t('hubCancel')) : null,
      ),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const hours = rows.filter((r) => r.on.checked).map((r) => ({ day: r.day, open: r.open.value, close: r.close.value }));
      const wrong = hours.find((x) => x.close <= x.open);
      if (wrong) return toast(tf('hubClosesBeforeOpens', { day: dayName(wrong.day) }), 'error');
      const body = {
        name: name.value.trim(),
        address: address.value.trim(),
        location: { type: 'Point' as const, coordinates: [Number(lngIn.value), Number(latIn.value)] as [number, number] },
        opening_hours: hours,
        active: active.checked,
      };
      const call = hub
        ? ok(api.PATCH('/api/v1/hubs/{id}', { params: { path: { id: hub.id } }, body }))
        : ok(api.POST('/api/v1/hubs', { body }));
      call.then(async () => {
        toast(t('hubSaved'));
        edit(null);
        await refresh();
      }, fail);
    });
    clear(formBox, form);
  }

  async function remove(hub: Hub) {
    if (!confirm(tf('hubDeleteConfirm', { name: hub.name }))) return;
    try {
      await ok(api.DELETE('/api/v1/hubs/{id}', { params: { path: { id: hub.id } } }));
      toast(t('hubDeleted'));
      edit(null);
      await refresh();
    } catch (e) {
      fail(e);
    }
  }

  if (canWrite) edit(null);
  await refresh().catch(fail);
}
