import { all, api, ok } from './api';
import { clear, h } from './dom';
import { fmtTime, t } from './i18n';
import { fail, field, formError, toast } from './merchant-ui';

/**
 * The merchant's online shop (WooCommerce, Shopify): connect one with its webhook secret and see the URL to paste
 * into it; the shop's orders that came without coordinates wait here for their delivery point.
 */

const listConnections = () => ok(api.GET('/api/v1/shops/connections', { params: { query: { limit: 50 } } }));
type Connection = Awaited<ReturnType<typeof listConnections>>['data'][number];
const listAwaiting = () => ok(api.GET('/api/v1/shops/orders', { params: { query: { status: 'awaiting_location', limit: 50 } } }));
type ShopOrder = Awaited<ReturnType<typeof listAwaiting>>['data'][number];

export async function renderOnlineShop(main: HTMLElement): Promise<void> {
  const connections = h('div', { id: 'shop-connections', class: 'cards' });
  const awaiting = h('div', { id: 'shop-awaiting', class: 'cards' });
  const form = connectForm(() => void drawConnections(connections));
  clear(
    main,
    h(
      'div',
      { class: 'two-cols' },
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'shop-connect' },
        h('h1', { id: 'shop-connect' }, t('shopConnect')),
        form,
        h('h2', { id: 'shop-connections-title' }, t('shopConnections')),
        connections,
      ),
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'shop-awaiting-title' },
        h('h1', { id: 'shop-awaiting-title' }, t('shopAwaiting')),
        h('p', { class: 'muted' }, t('shopAwaitingHelp')),
        awaiting,
      ),
    ),
  );
  const [branches] = await Promise.all([
    all((cursor) => ok(api.GET('/api/v1/merchant/branches', { params: { query: { limit: 200, cursor, active: true } } })), 500).catch(
      () => [],
    ),
    drawConnections(connections),
    drawAwaiting(awaiting),
  ]);
  const sel = form.querySelector('#s-branch') as HTMLSelectElement;
  for (const b of branches) sel.append(h('option', { value: b.id }, b.name));
}

function connectForm(done: () => void): HTMLFormElement {
  const form = h(
    'form',
    { class: 'form', id: 'shop-form', novalidate: true },
    field(
      's-platform',
      t('shopPlatform'),
      h('select', null, h('option', { value: 'woocommerce' }, 'WooCommerce'), h('option', { value: 'shopify' }, 'Shopify')),
    ),
    field(
      's-url',
      t('shopUrl'),
      h('input', { type: 'text', required: true, maxlength: 300, placeholder: 'https://tienda.example.com', autocomplete: 'off' }),
    ),
    field(
      's-secret',
      t('shopSecret'),
      h('input', { type: 'password', required: true, minlength: 8, maxlength: 200, autocomplete: 'new-password' }),
    ),
    h('p', { class: 'muted' }, t('shopSecretHelp')),
    field('s-branch', t('shopPickupBranch'), h('select', null, h('option', { value: '' }, t('shopMerchantLocation')))),
    h('button', { type: 'submit', class: 'primary' }, t('shopConnectButton')),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement).value.trim();
    if (!v('s-url')) return formError(form, t('shopUrlRequired'));
    if (v('s-secret').length < 8) return formError(form, t('shopSecretRequired'));
    formError(form, null);
    try {
      await ok(
        api.POST('/api/v1/shops/connections', {
          body: {
            platform: v('s-platform') as Connection['platform'],
            shop_url: v('s-url'),
            secret: v('s-secret'),
            ...(v('s-branch') ? { branch_id: v('s-branch') } : {}),
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

async function drawConnections(box: HTMLElement) {
  try {
    const page = await listConnections();
    clear(
      box,
      page.data.length
        ? page.data.map((c) => connectionCard(c, () => void drawConnections(box)))
        : h('p', { class: 'muted' }, t('nothingYet')),
    );
  } catch (e) {
    fail(e);
  }
}

function connectionCard(c: Connection, changed: () => void) {
  const url = new URL(c.webhook_url, location.origin).toString();
  return h(
    'article',
    { class: 'card-x', 'data-connection-id': c.id },
    h('header', null, h('strong', null, c.platform === 'shopify' ? 'Shopify' : 'WooCommerce'), h('span', { class: 'badge' }, c.shop_url)),
    h('p', null, t('shopPasteUrl')),
    h('output', { class: 'link webhook-url' }, url),
    h('p', { class: 'muted' }, c.topics.join(' · ')),
    h('p', { class: 'muted' }, `${t('shopSecretSaved')}: ${fmtTime(c.secret_set_at)}`),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          if (!confirm(t('shopDisconnectConfirm'))) return;
          try {
            await api.DELETE('/api/v1/shops/connections/{connection_id}', { params: { path: { connection_id: c.id } } });
            changed();
          } catch (e) {
            fail(e);
          }
        },
      },
      t('shopDisconnect'),
    ),
  );
}

async function drawAwaiting(box: HTMLElement) {
  try {
    const page = await listAwaiting();
    clear(
      box,
      page.data.length ? page.data.map((o) => awaitingCard(o, () => void drawAwaiting(box))) : h('p', { class: 'muted' }, t('nothingYet')),
    );
  } catch (e) {
    fail(e);
  }
}

function awaitingCard(o: ShopOrder, placed: () => void) {
  const lat = h('input', { type: 'text', inputmode: 'decimal', id: `lat-${o.id}` });
  const lon = h('input', { type: 'text', inputmode: 'decimal', id: `lon-${o.id}` });
  const form = h(
    'form',
    { class: 'form', novalidate: true },
    h('div', { class: 'row' }, field(`lat-${o.id}`, t('latitude'), lat), field(`lon-${o.id}`, t('longitude'), lon)),
    h('button', { type: 'submit', class: 'primary' }, t('shopPlace')),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const la = Number((lat as HTMLInputElement).value.trim());
    const lo = Number((lon as HTMLInputElement).value.trim());
    const given = (lat as HTMLInputElement).value.trim() && (lon as HTMLInputElement).value.trim();
    if (!given || !Number.isFinite(la) || !Number.isFinite(lo) || Math.abs(la) > 90 || Math.abs(lo) > 180)
      return formError(form, t('pointRequired'));
    formError(form, null);
    try {
      await ok(
        api.POST('/api/v1/shops/orders/{shop_order_id}/place', {
          params: { path: { shop_order_id: o.id } },
          body: { dropoff_location: { type: 'Point', coordinates: [lo, la] } },
        }),
      );
      toast(t('saved'));
      placed();
    } catch (e) {
      fail(e);
    }
  });
  return h(
    'article',
    { class: 'card-x', 'data-shop-order-id': o.id },
    h(
      'header',
      null,
      h('strong', null, o.customer_name),
      h('span', { class: 'badge' }, o.shop_order_number ?? o.shop_order_id),
      h('time', null, fmtTime(o.created_at)),
    ),
    h('p', null, o.customer_phone ?? '—', ' · ', o.dropoff_address),
    o.package_description ? h('p', { class: 'muted' }, o.package_description) : null,
    o.note ? h('p', { class: 'failure' }, o.note) : null,
    form,
  );
}
