import { h } from './dom';
import { errorText, getLang } from './i18n';

/** Pieces the merchant counter's views share: messages, money, the problem of a failed call in the page's language. */

export function toast(message: string, kind: 'info' | 'error' = 'info'): void {
  const box = document.getElementById('toasts');
  if (!box) return;
  const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, message);
  box.append(el);
  setTimeout(() => el.remove(), 6000);
}

/** The server's problem said in the page's language (the shared mapping of codes and statuses). */
export const problemText = (e: unknown): string => errorText(e);

export const fail = (e: unknown): void => toast(problemText(e), 'error');

export function fmtMoney(amount: string | number | null | undefined, currency = 'BOB'): string {
  if (amount === null || amount === undefined) return '—';
  const n = Number(amount);
  return `${currency === 'BOB' ? 'Bs' : currency} ${n.toLocaleString(getLang() === 'es' ? 'es-BO' : 'en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** A price or amount as the API takes it: digits, at most two decimals (a comma is read as the decimal point). */
export function parseMoney(raw: string, { positive = false } = {}): string | null {
  const v = raw.trim().replace(',', '.');
  if (!/^\d{1,10}(\.\d{1,2})?$/.test(v)) return null;
  if (positive && Number(v) <= 0) return null;
  return v;
}

/** A labelled field: <label> with its input, and a message slot that says what is wrong. */
export function field(id: string, text: string, input: HTMLElement): HTMLElement {
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, text), input);
}

/** Shows a form's error (role=alert) or clears it. */
export function formError(form: HTMLElement, message: string | null): void {
  let el = form.querySelector<HTMLElement>('.form-error');
  if (!el) {
    el = h('p', { class: 'form-error error', role: 'alert' });
    form.append(el);
  }
  el.textContent = message ?? '';
  el.hidden = !message;
}
