import { all, api, ok } from './api';
import type { paths } from './api-types';
import { clear, h } from './dom';
import { fmtTime, t, tf } from './i18n';
import { fail, field, fmtMoney, formError, parseMoney, problemText, toast } from './merchant-ui';
import { BadPhoto, objectUrl, resizePhoto, uploadPhoto } from './merchant-upload';

/** Catalog (items with photos, prices, sold out now) and branches (opening hours with overnight ranges, open or closed at a glance). */

const listItems = () => all((cursor) => ok(api.GET('/api/v1/merchant/catalog', { params: { query: { limit: 200, cursor } } })), 2000);
type Item = Awaited<ReturnType<typeof listItems>>[number];
// The currency has a default in the document (the organization's), so the generated type requires it; the page never sends it.
type ItemPatch = paths['/api/v1/merchant/catalog/{id}']['patch']['requestBody']['content']['application/json'];
type ItemNew = paths['/api/v1/merchant/catalog']['post']['requestBody']['content']['application/json'];
const listBranches = () => all((cursor) => ok(api.GET('/api/v1/merchant/branches', { params: { query: { limit: 200, cursor } } })), 500);
type Branch = Awaited<ReturnType<typeof listBranches>>[number];

/* ---------------- catalog ---------------- */

export async function renderCatalog(main: HTMLElement): Promise<void> {
  const grid = h('div', { id: 'catalog', class: 'catalog' });
  clear(
    main,
    h(
      'section',
      { class: 'panel wide', 'aria-labelledby': 'catalog-title' },
      h(
        'div',
        { class: 'panel-head' },
        h('h1', { id: 'catalog-title' }, t('catalog')),
        h('button', { type: 'button', class: 'primary', id: 'new-item', onclick: () => editItem(null, () => void draw()) }, t('newItem')),
      ),
      grid,
    ),
    h('dialog', { id: 'item-dialog', 'aria-labelledby': 'item-title' }),
  );
  const draw = async () => {
    try {
      const items = await listItems();
      clear(grid, items.length ? items.map((it) => itemCard(it, () => void draw())) : h('p', { class: 'muted' }, t('nothingYet')));
    } catch (e) {
      fail(e);
    }
  };
  await draw();
}

function itemCard(it: Item, changed: () => void): HTMLElement {
  const img = h('img', { alt: '', class: 'thumb', width: 96, height: 96 });
  if (it.image_object_id)
    void objectUrl(it.image_object_id).then(
      (u) => ((img.src = u), (img.dataset.loaded = 'true')),
      () => undefined,
    );
  const toggle = h('input', { type: 'checkbox', class: 'switch', checked: it.available, 'aria-label': `${t('availableNow')}: ${it.name}` });
  toggle.addEventListener('change', async () => {
    try {
      await ok(
        api.PATCH('/api/v1/merchant/catalog/{id}', { params: { path: { id: it.id } }, body: { available: toggle.checked } as ItemPatch }),
      );
      card.dataset.available = String(toggle.checked);
      state.textContent = toggle.checked ? t('availableNow') : t('soldOut');
    } catch (e) {
      toggle.checked = !toggle.checked;
      fail(e);
    }
  });
  const state = h('span', { class: 'avail' }, it.available ? t('availableNow') : t('soldOut'));
  const card = h(
    'article',
    { class: 'item', 'data-item-id': it.id, 'data-available': String(it.available) },
    it.image_object_id ? img : h('div', { class: 'thumb empty', 'aria-hidden': 'true' }, '🍽'),
    h(
      'div',
      { class: 'item-body' },
      h('h2', null, it.name),
      it.description ? h('p', { class: 'muted' }, it.description) : null,
      h('p', { class: 'price' }, fmtMoney(it.price, it.currency)),
    ),
    h(
      'div',
      { class: 'item-actions' },
      h('label', { class: 'inline' }, toggle, state),
      h('button', { type: 'button', class: 'edit', onclick: () => editItem(it, changed) }, t('edit')),
    ),
  );
  return card;
}

function editItem(it: Item | null, changed: () => void) {
  const dialog = document.getElementById('item-dialog') as HTMLDialogElement;
  const preview = h('img', { alt: '', class: 'thumb', width: 96, height: 96, hidden: true });
  let photo: Blob | null = null;
  const file = h('input', { type: 'file', accept: 'image/jpeg,image/png,image/webp', id: 'i-photo' });
  const form = h(
    'form',
    { class: 'form detail', novalidate: true },
    h('h2', { id: 'item-title' }, it ? it.name : t('newItem')),
    field('i-name', t('name'), h('input', { type: 'text', required: true, maxlength: 160, value: it?.name ?? '' })),
    field('i-desc', t('description'), h('input', { type: 'text', maxlength: 2000, value: it?.description ?? '' })),
    field('i-price', t('price'), h('input', { type: 'text', inputmode: 'decimal', required: true, value: it?.price ?? '' })),
    h('div', { class: 'field' }, h('label', { for: 'i-photo' }, t('photo')), file, preview),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, t('save')),
      h('button', { type: 'button', onclick: () => dialog.close() }, t('close')),
    ),
  );
  if (it?.image_object_id)
    void objectUrl(it.image_object_id).then(
      (u) => ((preview.src = u), (preview.hidden = false)),
      () => undefined,
    );
  file.addEventListener('change', async () => {
    photo = null;
    const f = file.files?.[0];
    if (!f) return;
    try {
      photo = await resizePhoto(f);
      preview.src = await new Promise<string>((res) => {
        const fr = new FileReader();
        fr.onload = () => res(String(fr.result));
        fr.readAsDataURL(photo!);
      });
      preview.hidden = false;
      formError(form, null);
    } catch (e) {
      file.value = '';
      formError(form, e instanceof BadPhoto ? t('badPhoto') : t('errOffline'));
    }
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement).value.trim();
    if (!v('i-name')) return formError(form, t('nameRequired'));
    const price = parseMoney(v('i-price'));
    if (price === null) return formError(form, t('badPrice'));
    if (file.files?.length && !photo) return formError(form, t('badPhoto'));
    formError(form, null);
    try {
      const image = photo ? await uploadPhoto(photo, 'other') : undefined;
      const body = {
        name: v('i-name'),
        description: v('i-desc') || (it ? null : undefined),
        price,
        ...(image ? { image_object_id: image } : {}),
      };
      if (it) await ok(api.PATCH('/api/v1/merchant/catalog/{id}', { params: { path: { id: it.id } }, body: body as ItemPatch }));
      else await ok(api.POST('/api/v1/merchant/catalog', { body: { ...body, description: body.description ?? undefined } as ItemNew }));
      dialog.close();
      toast(t('saved'));
      changed();
    } catch (e) {
      formError(form, problemText(e));
    }
  });
  clear(dialog, form);
  dialog.showModal();
}

/* ---------------- branches ---------------- */

interface Range {
  day: number;
  open: string;
  close: string;
}

export async function renderBranches(main: HTMLElement): Promise<void> {
  const box = h('div', { id: 'branches', class: 'cards' });
  clear(
    main,
    h('section', { class: 'panel wide', 'aria-labelledby': 'branches-title' }, h('h1', { id: 'branches-title' }, t('branches')), box),
  );
  const draw = async () => {
    try {
      const list = await listBranches();
      clear(box, list.length ? list.map((b) => branchCard(b, () => void draw())) : h('p', { class: 'muted' }, t('nothingYet')));
    } catch (e) {
      fail(e);
    }
  };
  await draw();
}

const dayNames = () => t('days').split(',');
const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Checks the ranges as the merchant entered them: a close not after its open is an error unless the range is marked past midnight. */
export function checkRanges(rows: (Range & { overnight: boolean })[]): string | null {
  for (const r of rows) {
    if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(r.open) || !/^([01]\d|2[0-3]):[0-5]\d$/.test(r.close)) return t('badTime');
    if (!r.overnight && minutes(r.close) <= minutes(r.open))
      return tf('closeBeforeOpen', { day: dayNames()[r.day], open: r.open, close: r.close });
    if (r.overnight && minutes(r.close) > minutes(r.open))
      return tf('closeBeforeOpen', { day: dayNames()[r.day], open: r.open, close: r.close });
  }
  return null;
}

function branchCard(b: Branch, changed: () => void): HTMLElement {
  const rows = h('div', { class: 'ranges' });
  const addRow = (r: Range) => {
    const overnight = minutes(r.close) <= minutes(r.open);
    const day = h(
      'select',
      { class: 'r-day', 'aria-label': t('date') },
      dayNames().map((n, i) => h('option', { value: i, selected: i === r.day }, n)),
    );
    const row = h(
      'div',
      { class: 'range' },
      day,
      h('label', { class: 'inline' }, t('opens'), h('input', { type: 'time', class: 'r-open', value: r.open, required: true })),
      h('label', { class: 'inline' }, t('closes'), h('input', { type: 'time', class: 'r-close', value: r.close, required: true })),
      h('label', { class: 'inline' }, h('input', { type: 'checkbox', class: 'r-overnight', checked: overnight }), t('overnight')),
      h('button', { type: 'button', class: 'remove', onclick: () => row.remove() }, t('remove')),
    );
    rows.append(row);
  };
  for (const r of b.opening_hours) addRow(r);
  const active = h('input', { type: 'checkbox', class: 'b-active', checked: b.active });
  const prep = h('input', {
    type: 'number',
    class: 'b-prep',
    id: `b-prep-${b.id}`,
    min: 1,
    max: 240,
    step: 1,
    inputmode: 'numeric',
    required: true,
    value: String(b.preparation_min),
  });
  const form = h(
    'form',
    { class: 'form', novalidate: true },
    h(
      'fieldset',
      null,
      h('legend', null, t('openingHours')),
      b.opening_hours.length ? null : h('p', { class: 'muted' }, t('alwaysOpen')),
      rows,
    ),
    h('div', { class: 'field' }, h('label', { for: `b-prep-${b.id}` }, t('defaultPrep')), prep),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'add-range', onclick: () => addRow({ day: 1, open: '09:00', close: '18:00' }) }, t('addRange')),
      h('label', { class: 'inline' }, active, t('active')),
      h('button', { type: 'submit', class: 'primary' }, t('save')),
    ),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const ranges = [...rows.querySelectorAll('.range')].map((r) => ({
      day: Number((r.querySelector('.r-day') as HTMLSelectElement).value),
      open: (r.querySelector('.r-open') as HTMLInputElement).value,
      close: (r.querySelector('.r-close') as HTMLInputElement).value,
      overnight: (r.querySelector('.r-overnight') as HTMLInputElement).checked,
    }));
    const bad = checkRanges(ranges);
    if (bad) return formError(form, bad);
    const prepMin = Number(prep.value);
    if (!/^\d+$/.test(prep.value.trim()) || prepMin < 1 || prepMin > 240) return formError(form, t('badPrep'));
    formError(form, null);
    try {
      await ok(
        api.PATCH('/api/v1/merchant/branches/{id}', {
          params: { path: { id: b.id } },
          body: {
            opening_hours: ranges.map(({ day, open, close }) => ({ day, open, close })),
            active: active.checked,
            preparation_min: prepMin,
          },
        }),
      );
      toast(t('saved'));
      changed();
    } catch (e) {
      formError(form, problemText(e));
    }
  });
  return h(
    'article',
    { class: 'branch', 'data-branch-id': b.id, 'data-open': String(b.open_now) },
    h(
      'header',
      null,
      h('h2', null, b.name),
      h('span', { class: `badge ${b.open_now ? 'is-open' : 'is-closed'}` }, b.open_now ? t('open') : t('closed')),
      !b.open_now && b.next_open_at ? h('span', { class: 'muted' }, tf('opensAt', { when: fmtTime(b.next_open_at) })) : null,
    ),
    h('p', { class: 'muted' }, b.address),
    form,
  );
}
