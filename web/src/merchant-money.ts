import { all, api, ok } from './api';
import type { paths } from './api-types';
import { clear, h } from './dom';
import { fmtTime, getLang, label, t, tf } from './i18n';
import { fail, field, fmtMoney, formError, parseMoney, problemText, toast } from './merchant-ui';
import { BadPhoto, objectUrl, resizePhoto, uploadPhoto } from './merchant-upload';

/** Money (wallet, entries of a period, settlements received, debt payments, the period as a spreadsheet), coupons, direct payments. */

/* ---------------- money ---------------- */

type WalletQuery = NonNullable<paths['/api/v1/merchant/wallet']['get']['parameters']['query']>;
const walletPage = (query: WalletQuery) => ok(api.GET('/api/v1/merchant/wallet', { params: { query } }));
type Line = Awaited<ReturnType<typeof walletPage>>['data'][number];

const monthStart = () => {
  const d = new Date();
  return new Date(d.getFullYear(), d.getMonth(), 1);
};
const dayInput = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
/** A local calendar day (from the date input) as the instant it starts. */
const dayStart = (v: string) => new Date(`${v}T00:00:00`);

export async function renderMoney(main: HTMLElement): Promise<void> {
  const from = h('input', { type: 'date', id: 'm-from', value: dayInput(monthStart()) });
  const to = h('input', { type: 'date', id: 'm-to', value: dayInput(new Date()) });
  const cards = h('div', { id: 'wallet', class: 'wallet' });
  const entries = h('div', { id: 'entries' });
  const settlements = h('div', { id: 'settlements' });
  const held = h('div', { id: 'cash-held' });
  const debts = h('div', { id: 'debt-payments' });
  const periodForm = h(
    'form',
    { class: 'period', novalidate: true },
    h('label', { class: 'inline' }, t('fromDate'), from),
    h('label', { class: 'inline' }, t('toDate'), to),
    h('button', { type: 'submit', class: 'primary' }, t('show')),
    h('button', { type: 'button', id: 'spreadsheet', onclick: () => void download() }, t('spreadsheet')),
  );
  clear(
    main,
    h(
      'div',
      { class: 'money-page' },
      h('section', { class: 'panel wide', 'aria-labelledby': 'wallet-title' }, h('h1', { id: 'wallet-title' }, t('wallet')), cards),
      h(
        'section',
        { class: 'panel wide', 'aria-labelledby': 'held-title' },
        h('h2', { id: 'held-title' }, t('cashHeld')),
        h('p', { class: 'muted' }, t('cashHeldHint')),
        held,
      ),
      h(
        'section',
        { class: 'panel wide', 'aria-labelledby': 'entries-title' },
        h('h2', { id: 'entries-title' }, t('entries')),
        periodForm,
        entries,
      ),
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'settlements-title' },
        h('h2', { id: 'settlements-title' }, t('settlementsReceived')),
        settlements,
      ),
      h('section', { class: 'panel', 'aria-labelledby': 'debts-title' }, h('h2', { id: 'debts-title' }, t('debtPayments')), debts),
    ),
  );
  const period = (): { from: string; to: string } | null => {
    if (!from.value || !to.value) return null;
    const a = dayStart(from.value);
    const b = new Date(dayStart(to.value).getTime() + 86_400_000); // the "to" day included
    return b > a ? { from: a.toISOString(), to: b.toISOString() } : null;
  };
  const draw = async () => {
    const p = period();
    if (!p) return formError(periodForm, t('badPeriod'));
    formError(periodForm, null);
    try {
      const [page, settled, paid, cash] = await Promise.all([
        walletPage({ ...p, limit: 200 }),
        ok(api.GET('/api/v1/merchant/settlements', { params: { query: { limit: 50 } } })),
        walletPage({ type: 'merchant_debt_payment', limit: 50 }),
        ok(api.GET('/api/v1/merchant/cash', { params: { query: { limit: 100 } } })),
      ]);
      clear(
        held,
        h(
          'p',
          { class: 'totals', 'data-total': cash.total },
          h('strong', null, tf('cashHeldTotal', { amount: fmtMoney(cash.total, cash.currency), n: cash.count })),
        ),
        cash.data.length
          ? h(
              'div',
              { class: 'table-scroll' },
              h(
                'table',
                { class: 'held' },
                h(
                  'thead',
                  null,
                  h('tr', null, h('th', null, t('order')), h('th', null, t('collectedAt')), h('th', { class: 'num' }, t('amount'))),
                ),
                h(
                  'tbody',
                  null,
                  cash.data.map((c) =>
                    h(
                      'tr',
                      { 'data-order-id': c.order_id },
                      h('td', null, `#${c.order_id.slice(-6).toUpperCase()}`),
                      h('td', null, fmtTime(String(c.collected_at))),
                      h('td', { class: 'num' }, fmtMoney(c.amount, c.currency)),
                    ),
                  ),
                ),
              ),
            )
          : null,
      );
      const w = page.wallet;
      const card = (key: 'availableMoney' | 'pendingMoney' | 'debt' | 'credit', amount: string, cls: string) =>
        h('div', { class: `stat ${cls}`, 'data-stat': cls }, h('span', null, t(key)), h('strong', null, fmtMoney(amount, w.currency)));
      clear(
        cards,
        card('availableMoney', w.available, 'available'),
        card('pendingMoney', w.pending, 'pending'),
        card('debt', w.debt, 'debt'),
        card('credit', w.credit, 'credit'),
      );
      clear(
        entries,
        entryTable(page.data, w.currency),
        page.next_cursor ? h('p', { class: 'muted' }, `${page.data.length} / ${page.totals.count}`) : null,
        h(
          'p',
          { class: 'totals' },
          h('strong', null, `${t('netPeriod')}: ${fmtMoney(page.totals.net, w.currency)}`),
          ' · ',
          Object.entries(page.totals.by_type)
            .map(([k, v]) => `${label(k)} ${fmtMoney(v, w.currency)}`)
            .join(' · '),
        ),
      );
      clear(
        settlements,
        settled.data.length
          ? h(
              'div',
              { class: 'table-scroll' },
              h(
                'table',
                null,
                h(
                  'thead',
                  null,
                  h(
                    'tr',
                    null,
                    h('th', null, t('period')),
                    h('th', null, t('status')),
                    h('th', null, t('gross')),
                    h('th', null, t('netted')),
                    h('th', null, t('payout')),
                  ),
                ),
                h(
                  'tbody',
                  null,
                  settled.data.map((s) =>
                    h(
                      'tr',
                      { 'data-settlement-id': s.id },
                      h('td', null, `${fmtTime(String(s.period_start))} – ${fmtTime(String(s.period_end))}`),
                      h('td', null, label(s.status)),
                      h('td', null, fmtMoney(s.gross_amount, s.currency)),
                      h('td', null, fmtMoney(s.debt_netted, s.currency)),
                      h('td', null, h('strong', null, fmtMoney(s.payout_amount, s.currency))),
                    ),
                  ),
                ),
              ),
            )
          : h('p', { class: 'muted' }, t('nothingYet')),
      );
      clear(debts, paid.data.length ? entryTable(paid.data, w.currency) : h('p', { class: 'muted' }, t('nothingYet')));
    } catch (e) {
      fail(e);
    }
  };
  /** The period's entries as a workbook built by the server (headers and entry types in the page's language). */
  const download = async () => {
    const p = period();
    if (!p) return formError(periodForm, t('badPeriod'));
    const button = periodForm.querySelector<HTMLButtonElement>('#spreadsheet')!;
    button.disabled = true;
    toast(t('downloading'));
    try {
      const file = await ok(api.GET('/api/v1/merchant/wallet.xlsx', { params: { query: { ...p, lang: getLang() } }, parseAs: 'blob' }));
      const url = URL.createObjectURL(file as Blob);
      const a = h('a', { href: url, download: `wallet_${from.value}_${to.value}.xlsx`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      fail(e);
    } finally {
      button.disabled = false;
    }
  };
  periodForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void draw();
  });
  await draw();
}

const shortId = (id: string) => `#${id.slice(-6).toUpperCase()}`;

/** What an entry is, said in the page's language from its type and what it refers to (the server's note is English text for staff). */
export function describeEntry(l: Pick<Line, 'type' | 'order_id' | 'trip_id'>): string {
  const order = l.order_id ? shortId(l.order_id) : '';
  switch (l.type) {
    case 'sale_credit':
      return tf('desc_sale_credit', { order });
    case 'platform_commission':
      return tf('desc_platform_commission', { order });
    case 'delivery_fee_debit':
      return l.order_id ? tf('desc_delivery_fee_debit', { order }) : t('desc_delivery_fee_express');
    case 'merchant_debt_payment':
      return t('desc_merchant_debt_payment');
    case 'refund':
      return tf('desc_refund', { order });
    case 'settlement_debit':
      return t('desc_settlement_debit');
    case 'adjustment':
      return t('desc_adjustment');
    default:
      return label(l.type);
  }
}

function entryTable(lines: Line[], currency: string): HTMLElement {
  if (!lines.length) return h('p', { class: 'muted' }, t('nothingYet'));
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'entries' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', null, t('date')),
          h('th', null, t('type')),
          h('th', { class: 'num' }, t('amount')),
          h('th', null, t('detail')),
        ),
      ),
      h(
        'tbody',
        null,
        lines.map((l) =>
          h(
            'tr',
            { 'data-entry-type': l.type, 'data-order-id': l.order_id ?? '' },
            h('td', null, fmtTime(String(l.created_at))),
            h('td', null, label(l.type)),
            h('td', { class: `num ${Number(l.amount) < 0 ? 'neg' : 'pos'}` }, fmtMoney(l.amount, currency)),
            h('td', { class: 'muted detail' }, describeEntry(l)),
          ),
        ),
      ),
    ),
  );
}

/* ---------------- coupons ---------------- */

type CouponNew = paths['/api/v1/merchant/coupons']['post']['requestBody']['content']['application/json'];

export async function renderCoupons(main: HTMLElement): Promise<void> {
  const list = h('div', { id: 'coupons', class: 'cards' });
  const inp = (attrs: Record<string, unknown> = {}) => h('input', { type: 'text', ...attrs });
  const form = h(
    'form',
    { class: 'form', id: 'coupon-form', novalidate: true },
    field('c-code', t('code'), inp({ required: true, maxlength: 40, autocapitalize: 'characters' })),
    field('c-name', t('name'), inp({ required: true, maxlength: 120 })),
    field(
      'c-type',
      t('type'),
      h('select', null, h('option', { value: 'percent' }, t('percent')), h('option', { value: 'fixed' }, t('fixed'))),
    ),
    field('c-value', t('value'), inp({ inputmode: 'decimal', required: true })),
    field('c-min', t('minimumOrder'), inp({ inputmode: 'decimal', placeholder: '0.00' })),
    field('c-max', t('maxDiscount'), inp({ inputmode: 'decimal' })),
    field('c-until', t('validUntil'), h('input', { type: 'date' })),
    field('c-limit', t('usageLimit'), h('input', { type: 'number', min: 1, step: 1 })),
    h('button', { type: 'submit', class: 'primary' }, t('create')),
  );
  clear(
    main,
    h(
      'div',
      { class: 'two-cols' },
      h('section', { class: 'panel', 'aria-labelledby': 'coupon-new' }, h('h1', { id: 'coupon-new' }, t('newCoupon')), form),
      h('section', { class: 'panel', 'aria-labelledby': 'coupons-title' }, h('h1', { id: 'coupons-title' }, t('coupons')), list),
    ),
  );
  const draw = async () => {
    try {
      const coupons = await all((cursor) => ok(api.GET('/api/v1/merchant/coupons', { params: { query: { limit: 200, cursor } } })), 1000);
      clear(
        list,
        coupons.length
          ? coupons.map((c) => {
              const toggle = h('input', { type: 'checkbox', checked: c.active, 'aria-label': `${t('active')}: ${c.code}` });
              toggle.addEventListener('change', async () => {
                try {
                  await ok(
                    api.PATCH('/api/v1/merchant/coupons/{id}', { params: { path: { id: c.id } }, body: { active: toggle.checked } }),
                  );
                } catch (e) {
                  toggle.checked = !toggle.checked;
                  fail(e);
                }
              });
              return h(
                'article',
                { class: 'card-x', 'data-coupon-id': c.id },
                h('header', null, h('strong', null, c.code), h('span', null, c.name), h('label', { class: 'inline' }, toggle, t('active'))),
                h(
                  'p',
                  null,
                  c.discount_type === 'percent' ? `${Number(c.discount_value)} %` : fmtMoney(c.discount_value),
                  c.minimum_order !== '0.00' ? ` · ${t('minimumOrder')} ${fmtMoney(c.minimum_order)}` : '',
                  c.valid_until ? ` · ${t('validUntil')} ${fmtTime(c.valid_until)}` : '',
                ),
                h('p', { class: 'muted' }, `${c.usage_count}${c.usage_limit ? ` / ${c.usage_limit}` : ''} ${t('uses')}`),
              );
            })
          : h('p', { class: 'muted' }, t('nothingYet')),
      );
    } catch (e) {
      fail(e);
    }
  };
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement).value.trim();
    if (!v('c-code') || !v('c-name')) return formError(form, t('nameRequired'));
    const value = parseMoney(v('c-value'), { positive: true });
    if (value === null) return formError(form, t('badValue'));
    const min = v('c-min') ? parseMoney(v('c-min')) : '0';
    const max = v('c-max') ? parseMoney(v('c-max')) : undefined;
    if (min === null || max === null) return formError(form, t('badPrice'));
    const limit = v('c-limit') ? Number(v('c-limit')) : undefined;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) return formError(form, t('badValue'));
    formError(form, null);
    const body = {
      code: v('c-code').toUpperCase(),
      name: v('c-name'),
      discount_type: v('c-type') as 'percent' | 'fixed',
      discount_value: value,
      minimum_order: min,
      ...(max ? { max_discount: max } : {}),
      ...(v('c-until') ? { valid_until: new Date(`${v('c-until')}T23:59:59`).toISOString() } : {}),
      ...(limit ? { usage_limit: limit } : {}),
    } as CouponNew;
    try {
      await ok(api.POST('/api/v1/merchant/coupons', { body }));
      form.reset();
      toast(t('saved'));
      await draw();
    } catch (e) {
      formError(form, problemText(e));
    }
  });
  await draw();
}

/* ---------------- direct payments: profile and proof reviews ---------------- */

type ProfilePatch = paths['/api/v1/merchant/payment-profile']['patch']['requestBody']['content']['application/json'];

export async function renderPayments(main: HTMLElement): Promise<void> {
  const reviews = h('div', { id: 'reviews', class: 'cards' });
  const form = h('form', { class: 'form', id: 'profile-form', novalidate: true });
  clear(
    main,
    h(
      'div',
      { class: 'two-cols' },
      h('section', { class: 'panel', 'aria-labelledby': 'profile-title' }, h('h1', { id: 'profile-title' }, t('paymentProfile')), form),
      h('section', { class: 'panel', 'aria-labelledby': 'reviews-title' }, h('h1', { id: 'reviews-title' }, t('proofReviews')), reviews),
    ),
  );
  try {
    const p = await ok(api.GET('/api/v1/merchant/payment-profile'));
    const text = (id: string, key: string, value: string | null, attrs: Record<string, unknown> = {}) =>
      field(id, t(key as 'instructions'), h('input', { type: 'text', value: value ?? '', ...attrs }));
    const enabled = h('input', { type: 'checkbox', id: 'p-enabled', checked: p.direct_payment_enabled });
    const qr = h('input', { type: 'file', id: 'p-qr', accept: 'image/jpeg,image/png,image/webp' });
    const qrImg = h('img', { alt: t('qr'), class: 'thumb', width: 120, height: 120, hidden: true });
    if (p.qr_storage_object_id)
      void objectUrl(p.qr_storage_object_id).then(
        (u) => ((qrImg.src = u), (qrImg.hidden = false)),
        () => undefined,
      );
    clear(
      form,
      h('label', { class: 'inline' }, enabled, t('directEnabled')),
      text('p-instructions', 'instructions', p.instructions, { maxlength: 1000 }),
      text('p-holder', 'accountHolder', p.account_holder, { maxlength: 120 }),
      text('p-bank', 'bankName', p.bank_name, { maxlength: 120 }),
      text('p-account', 'accountMasked', p.account_number_masked, { maxlength: 40 }),
      text('p-ref', 'referenceHint', p.payment_reference_hint, { maxlength: 200 }),
      h('div', { class: 'field' }, h('label', { for: 'p-qr' }, t('qr')), qr, qrImg),
      h('button', { type: 'submit', class: 'primary' }, t('save')),
    );
    form.onsubmit = async (ev) => {
      ev.preventDefault();
      const v = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement).value.trim() || null;
      formError(form, null);
      try {
        let qrId: string | undefined;
        if (qr.files?.[0]) qrId = await uploadPhoto(await resizePhoto(qr.files[0]), 'merchant_payment_qr', 'qr.jpg');
        const body = {
          direct_payment_enabled: enabled.checked,
          instructions: v('p-instructions'),
          account_holder: v('p-holder'),
          bank_name: v('p-bank'),
          account_number_masked: v('p-account'),
          payment_reference_hint: v('p-ref'),
          ...(qrId ? { qr_storage_object_id: qrId } : {}),
        } as ProfilePatch;
        await ok(api.PATCH('/api/v1/merchant/payment-profile', { body }));
        toast(t('saved'));
      } catch (e) {
        formError(form, e instanceof BadPhoto ? t('badPhoto') : problemText(e));
      }
    };
  } catch (e) {
    fail(e);
  }
  await drawReviews(reviews);
}

async function drawReviews(box: HTMLElement) {
  try {
    const page = await ok(api.GET('/api/v1/merchant/payment-reviews', { params: { query: { limit: 50 } } }));
    clear(
      box,
      page.data.length
        ? page.data.map((r) => {
            const img = h('img', { alt: t('viewProof'), class: 'proof', hidden: true });
            const note = h('input', { type: 'text', maxlength: 500, 'aria-label': t('rejectReason'), placeholder: t('rejectReason') });
            const decide = async (action: 'approve' | 'reject') => {
              if (action === 'reject' && !note.value.trim()) return toast(t('reasonRequired'), 'error');
              try {
                const path =
                  action === 'approve' ? '/api/v1/merchant/payment-reviews/{id}/approve' : '/api/v1/merchant/payment-reviews/{id}/reject';
                await ok(
                  api.POST(path, { params: { path: { id: r.id } }, body: note.value.trim() ? { notes: note.value.trim() } : {} } as never),
                );
                toast(t('saved'));
                await drawReviews(box);
              } catch (e) {
                fail(e);
              }
            };
            return h(
              'article',
              { class: 'card-x', 'data-review-id': r.id, 'data-status': r.status },
              h(
                'header',
                null,
                h('strong', null, `#${r.order_id.slice(-6).toUpperCase()}`),
                h('span', { class: 'badge' }, label(r.status)),
                h('span', null, fmtMoney(r.amount, r.currency)),
              ),
              r.customer_reference ? h('p', null, r.customer_reference) : null,
              h('p', { class: 'muted' }, fmtTime(r.submitted_at)),
              r.proof_storage_object_id
                ? h(
                    'button',
                    {
                      type: 'button',
                      onclick: () => void objectUrl(r.proof_storage_object_id!).then((u) => ((img.src = u), (img.hidden = false)), fail),
                    },
                    t('viewProof'),
                  )
                : null,
              img,
              r.status === 'pending'
                ? h(
                    'div',
                    { class: 'actions' },
                    h('button', { type: 'button', class: 'primary', onclick: () => void decide('approve') }, t('approve')),
                    note,
                    h('button', { type: 'button', class: 'danger', onclick: () => void decide('reject') }, t('reject')),
                  )
                : null,
            );
          })
        : h('p', { class: 'muted' }, t('nothingYet')),
    );
  } catch (e) {
    fail(e);
  }
}
