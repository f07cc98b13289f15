import './console-cash.css';
import { all, api, downloadFile, ok, type Driver } from './api';
import { $, clear, h } from './dom';
import { errorText, getLang, label, t, tf } from './i18n';

/**
 * The console's cash-on-delivery view (#/cash), for the cashier and the dispatcher: the cash each driver holds against his
 * limit, the day's reconciliation per driver (collected, remitted, outstanding, discrepancies) by territory, its workbook,
 * and recording a driver's hand-in (amount, method). Sub-administrators see their territories' drivers only (the API confines).
 */

interface CashRow {
  driver: Driver;
  cash_in_hand: string;
  cash_limit: string | null;
  at_cash_limit: boolean;
  open_shortfalls: number;
  currency: string;
}

type Reconciliation = Awaited<ReturnType<typeof reconciliationOf>>;
type Line = Reconciliation['data'][number];

const METHODS = ['cash', 'bank_transfer', 'deposit'] as const;

const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
/** A decimal string ("-12.5", "1234.50") in cents, exactly (money is never a float). */
const cents = (v: string): bigint => {
  const neg = v.trim().startsWith('-');
  const [i, f = ''] = v.trim().replace(/^[-+]/, '').split('.');
  const c = BigInt(i || '0') * 100n + BigInt(`${f}00`.slice(0, 2));
  return neg ? -c : c;
};
/** Cents as the page's language writes money: 1.234,50 (es) or 1,234.50 (en). */
const fmtCents = (c: bigint, currency?: string) => {
  const es = getLang() === 'es';
  const abs = c < 0n ? -c : c;
  const whole = String(abs / 100n).replace(/\B(?=(\d{3})+(?!\d))/g, es ? '.' : ',');
  const text = `${c < 0n ? '-' : ''}${whole}${es ? ',' : '.'}${String(abs % 100n).padStart(2, '0')}`;
  return currency ? `${text} ${currency}` : text;
};
const fmt = (amount: string, currency?: string) => fmtCents(cents(amount), currency);
const sum = (values: string[]) => values.reduce((s, v) => s + cents(v), 0n);

/** The reconciliation of a day (null: the organization's today, which the answer names). */
/** A driver's outstanding cash is his, whatever territory a row of his is under: counted once in the totals. */
const onePerDriver = <R extends { driver_id: string }>(rows: R[]) => [...new Map(rows.map((x) => [x.driver_id, x])).values()];

function reconciliationOf(day: string | null, territory: string) {
  const period = day ? { from: day, to: nextDay(day) } : {};
  return ok(
    api.GET('/api/v1/admin/cash-reconciliation', { params: { query: { ...period, ...(territory ? { territory_id: territory } : {}) } } }),
  );
}

/** Each approved driver's cash (a few requests at a time). */
async function cashRows(): Promise<CashRow[]> {
  const drivers = await all((cursor) => ok(api.GET('/api/v1/drivers', { params: { query: { status: 'approved', limit: 200, cursor } } })));
  const out: CashRow[] = [];
  const queue = [...drivers];
  const worker = async () => {
    for (let d = queue.shift(); d; d = queue.shift()) {
      const c = await ok(api.GET('/api/v1/drivers/{id}/cash', { params: { path: { id: d.id }, query: { limit: 1 } } }));
      out.push({
        driver: d,
        cash_in_hand: c.cash_in_hand,
        cash_limit: c.cash_limit,
        at_cash_limit: c.at_cash_limit,
        open_shortfalls: c.open_shortfalls,
        currency: c.currency,
      });
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return out.sort(
    (a, b) => Number(cents(b.cash_in_hand) - cents(a.cash_in_hand)) || a.driver.display_name.localeCompare(b.driver.display_name),
  );
}

export async function renderCash(main: HTMLElement, toast: (message: string, kind?: 'info' | 'error') => void) {
  const state: { day: string | null; territory: string } = { day: null, territory: '' };
  const territories = await ok(api.GET('/api/v1/territories', { params: { query: { limit: 200 } } })).then(
    (r) => r.data.map((x) => ({ id: x.id, name: x.name })),
    () => [] as { id: string; name: string }[],
  );
  const dayInput = h('input', { id: 'cash-day', type: 'date' });
  const territorySelect = h(
    'select',
    { id: 'cash-territory' },
    h('option', { value: '' }, t('cashAllTerritories')),
    territories.map((x) => h('option', { value: x.id }, x.name)),
  );
  const download = h('button', { type: 'button', id: 'cash-download', class: 'big' }, t('cashDownload'));
  const inHand = h(
    'section',
    { class: 'cash-panel', id: 'cash-in-hand', 'aria-labelledby': 'cash-in-hand-title' },
    h('h2', { id: 'cash-in-hand-title' }, t('cashInHandTitle')),
    h('div', { class: 'body' }, '…'),
  );
  const recon = h(
    'section',
    { class: 'cash-panel', id: 'cash-reconciliation', 'aria-labelledby': 'cash-rec-title' },
    h('h2', { id: 'cash-rec-title' }, t('cashReconciliationTitle')),
    h('div', { class: 'body' }, '…'),
  );
  const dialog = h('dialog', { id: 'remit-dialog', 'aria-labelledby': 'remit-title' });
  clear(
    main,
    h(
      'div',
      { class: 'cash-page' },
      h('h1', null, t('cashTitle')),
      h(
        'div',
        { class: 'cash-tools' },
        h('label', null, t('cashDay'), dayInput),
        h('label', null, t('territory'), territorySelect),
        download,
      ),
      inHand,
      recon,
      dialog,
    ),
  );

  const fail = (sec: HTMLElement) => (e: unknown) => clear($('.body', sec), h('p', { class: 'error', role: 'alert' }, errorText(e)));

  async function loadInHand() {
    const rows = await cashRows();
    const shown = rows.filter((r) => !state.territory || r.driver.territory_ids.includes(state.territory));
    const holding = shown.filter((r) => cents(r.cash_in_hand) !== 0n || r.open_shortfalls > 0);
    clear(
      $('.body', inHand),
      holding.length === 0
        ? h('p', null, t('cashNobody'))
        : h(
            'table',
            null,
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', null, t('driver')),
                h('th', { class: 'num' }, t('cashInHand')),
                h('th', { class: 'num' }, t('cashLimit')),
                h('th', { class: 'num' }, t('cashOpenShortfalls')),
                h('th', null, ''),
              ),
            ),
            h(
              'tbody',
              null,
              holding.map((r) =>
                h(
                  'tr',
                  { 'data-driver': r.driver.id, class: r.at_cash_limit ? 'at-limit' : undefined },
                  h(
                    'td',
                    null,
                    r.driver.display_name,
                    r.at_cash_limit ? h('span', { class: 'badge alert', title: t('cashAtLimit') }, t('cashAtLimit')) : null,
                  ),
                  h('td', { class: 'num' }, fmt(r.cash_in_hand, r.currency)),
                  h('td', { class: 'num' }, r.cash_limit === null ? t('cashNoLimit') : fmt(r.cash_limit, r.currency)),
                  h('td', { class: 'num' }, r.open_shortfalls ? String(r.open_shortfalls) : '—'),
                  h(
                    'td',
                    null,
                    cents(r.cash_in_hand) > 0n
                      ? h('button', { type: 'button', class: 'big remit', onclick: () => openRemit(r) }, t('cashRecordRemittance'))
                      : null,
                  ),
                ),
              ),
            ),
          ),
    );
  }

  async function loadReconciliation() {
    const r = await reconciliationOf(state.day, state.territory);
    if (!state.day) {
      state.day = r.from;
      dayInput.value = r.from;
      dayInput.max = r.from;
    }
    const name = (x: Line) => x.driver_name ?? x.driver_id;
    const cols: [string, (x: Line) => string, boolean][] = [
      [t('territory'), (x) => x.territory_name ?? '—', false],
      [t('driver'), name, false],
      [t('cashCollected'), (x) => fmt(x.collected), true],
      [t('cashRemitted'), (x) => fmt(x.remitted), true],
      [t('cashAdjusted'), (x) => fmt(x.adjusted), true],
      [t('cashOutstanding'), (x) => fmt(x.outstanding), true],
      [t('cashDiscrepancies'), (x) => String(x.discrepancies), true],
      [t('cashMissing'), (x) => fmt(x.discrepancy_amount), true],
    ];
    const rows = [...r.data].sort(
      (a, b) => (a.territory_name ?? '').localeCompare(b.territory_name ?? '') || name(a).localeCompare(name(b)),
    );
    const totals = ['collected', 'remitted', 'adjusted', 'outstanding'] as const;
    clear(
      $('.body', recon),
      rows.length === 0
        ? h('p', null, t('cashNoMovements'))
        : h(
            'table',
            null,
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                cols.map(([head, , num]) => h('th', { class: num ? 'num' : undefined }, head)),
              ),
            ),
            h(
              'tbody',
              null,
              rows.map((x) =>
                h(
                  'tr',
                  { 'data-driver': x.driver_id, class: x.discrepancies ? 'discrepancy' : undefined },
                  cols.map(([, get, num]) => h('td', { class: num ? 'num' : undefined }, get(x))),
                ),
              ),
            ),
            h(
              'tfoot',
              null,
              h(
                'tr',
                null,
                h('th', { colspan: 2 }, t('cashTotals')),
                totals.map((k) =>
                  h(
                    'th',
                    { class: 'num' },
                    fmtCents(sum(k === 'outstanding' ? onePerDriver(rows).map((x) => x.outstanding) : rows.map((x) => x[k]))),
                  ),
                ),
                h('th', { class: 'num' }, String(rows.reduce((s, x) => s + x.discrepancies, 0))),
                h('th', { class: 'num' }, fmtCents(sum(rows.map((x) => x.discrepancy_amount)))),
              ),
            ),
          ),
      rows.length ? h('p', { class: 'muted' }, `${rows[0].currency} · ${r.timezone}`) : null,
    );
  }

  function openRemit(r: CashRow) {
    // One key per opened form: a double submit (or a retry after a lost answer) records the hand-in once.
    const key = `console-${crypto.randomUUID()}`;
    const err = h('p', { class: 'error', role: 'alert', id: 'remit-error' });
    const amount = h('input', {
      id: 'remit-amount',
      name: 'amount',
      inputmode: 'decimal',
      required: true,
      pattern: '^\\d{1,10}([.,]\\d{1,2})?$',
      value: r.cash_in_hand,
      autocomplete: 'off',
    });
    const method = h(
      'select',
      { id: 'remit-method', name: 'method' },
      METHODS.map((m) => h('option', { value: m }, label(m))),
    );
    const reference = h('input', { id: 'remit-reference', name: 'reference', maxlength: 200, autocomplete: 'off' });
    const note = h('input', { id: 'remit-note', name: 'note', maxlength: 500, autocomplete: 'off' });
    const submit = h('button', { type: 'submit', class: 'primary big' }, t('cashRecord'));
    const form = h(
      'form',
      { class: 'remit-form', method: 'dialog' },
      h('h2', { id: 'remit-title' }, tf('cashRemittanceOf', { driver: r.driver.display_name })),
      h('p', { class: 'muted' }, `${t('cashInHand')}: ${fmt(r.cash_in_hand, r.currency)}`),
      h('label', { for: 'remit-amount' }, `${t('cashAmount')} (${r.currency})`),
      amount,
      h('label', { for: 'remit-method' }, t('cashMethod')),
      method,
      h('label', { for: 'remit-reference' }, t('cashReference')),
      reference,
      h('label', { for: 'remit-note' }, t('cashNote')),
      note,
      err,
      h('div', { class: 'actions' }, submit, h('button', { type: 'button', class: 'big', onclick: () => dialog.close() }, t('close'))),
    );
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      err.textContent = '';
      submit.disabled = true;
      try {
        const body = {
          amount: amount.value.trim().replace(',', '.'),
          method: method.value as (typeof METHODS)[number],
          ...(reference.value.trim() ? { reference: reference.value.trim() } : {}),
          ...(note.value.trim() ? { note: note.value.trim() } : {}),
        };
        const res = await ok(
          api.POST('/api/v1/drivers/{id}/cash-remittances', {
            params: { path: { id: r.driver.id } },
            headers: { 'idempotency-key': key },
            body,
          }),
        );
        dialog.close();
        toast(
          tf('cashRecorded', { amount: fmt(res.entry.amount.replace('-', ''), res.entry.currency), orders: res.covered_orders.length }),
        );
        await refresh();
      } catch (e) {
        // A refused amount is this form's own message; other problems in the page's words.
        const code = (e as { problem?: { code?: string } }).problem?.code;
        err.textContent = code === 'VALIDATION_FAILED' ? t('cashAmountInvalid') : errorText(e);
      } finally {
        submit.disabled = false;
      }
    });
    clear(dialog, form);
    dialog.showModal();
    amount.focus();
    amount.select();
  }

  async function refresh() {
    await Promise.all([loadInHand().catch(fail(inHand)), loadReconciliation().catch(fail(recon))]);
  }

  dayInput.addEventListener('change', () => {
    state.day = dayInput.value || null;
    void loadReconciliation().catch(fail(recon));
  });
  territorySelect.addEventListener('change', () => {
    state.territory = territorySelect.value;
    void refresh();
  });
  download.addEventListener('click', async () => {
    const q = new URLSearchParams({
      ...(state.day ? { from: state.day, to: nextDay(state.day) } : {}),
      lang: getLang(),
      ...(state.territory ? { territory_id: state.territory } : {}),
    });
    try {
      await downloadFile(`/api/v1/admin/cash-reconciliation.xlsx?${q}`, 'cash-reconciliation.xlsx');
    } catch (e) {
      toast(`${t('error')}: ${errorText(e)}`, 'error');
    }
  });
  await refresh();
}
