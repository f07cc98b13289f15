import { all, api, ok } from './api';
import { h } from './dom';
import { errorText, fmtTime, t, tf, type Key } from './i18n';

/**
 * Administrators' secrets in the console's Settings: a merchant's chat channel token and a webhook subscription's
 * signing secret. Write-only, as the API: a password field sends a new value; the page shows only whether one is
 * set and since when, and "saved" once the server stored it (encrypted). Server problems in the page's language.
 */

type Opt = { id: string; text: string };

function secretForm(opts: {
  id: string;
  title: Key;
  hint: Key;
  pick: Key;
  choices: Opt[];
  none: Key;
  input: Key;
  /** What a value the server refuses as invalid (400) must be, in the page's language. */
  invalid: Key;
  minLength: number;
  maxLength: number;
  /** When the chosen item's secret was set (null: not set). */
  state(id: string): Promise<string | null>;
  save(id: string, value: string): Promise<string | null>;
}) {
  const { id } = opts;
  const select = h(
    'select',
    { id: `${id}-pick`, name: 'pick' },
    opts.choices.map((c) => h('option', { value: c.id }, c.text)),
  );
  const input = h('input', {
    id: `${id}-value`,
    name: 'value',
    type: 'password',
    autocomplete: 'new-password',
    spellcheck: 'false',
    required: true,
    minlength: String(opts.minLength),
    maxlength: String(opts.maxLength),
  });
  const state = h('p', { id: `${id}-state`, class: 'secret-state' });
  const done = h('p', { id: `${id}-done`, class: 'secret-saved', role: 'status' });
  const error = h('p', { id: `${id}-error`, class: 'error', role: 'alert' });
  const show = (at: string | null) => (state.textContent = at ? tf('secretSetAt', { at: fmtTime(at) }) : t('secretNotSet'));
  const refresh = () => {
    done.textContent = '';
    error.textContent = '';
    if (!select.value) return;
    state.textContent = '…';
    opts.state(select.value).then(show, (e) => (error.textContent = errorText(e)));
  };
  select.addEventListener('change', refresh);
  const empty = !opts.choices.length;
  const form = h(
    'form',
    { class: 'settings secret-form', id, 'aria-labelledby': `${id}-title`, autocomplete: 'off' },
    h('h2', { id: `${id}-title` }, t(opts.title)),
    h('p', { class: 'hint' }, t(opts.hint)),
    empty
      ? h('p', { class: 'notice' }, t(opts.none))
      : h(
          'fieldset',
          null,
          h('legend', { class: 'sr-only' }, t(opts.title)),
          h('div', { class: 'field' }, h('label', { for: `${id}-pick` }, t(opts.pick)), select),
          state,
          h('div', { class: 'field' }, h('label', { for: `${id}-value` }, t(opts.input)), input),
        ),
    empty ? null : h('button', { type: 'submit', class: 'primary' }, t('save')),
    done,
    error,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    done.textContent = '';
    error.textContent = '';
    opts.save(select.value, input.value).then(
      (at) => {
        // The value leaves the page: nothing to read it back from.
        input.value = '';
        show(at);
        done.textContent = t('saved');
      },
      (err) => (error.textContent = (err as { problem?: { status?: number } }).problem?.status === 400 ? t(opts.invalid) : errorText(err)),
    );
  });
  if (!empty) refresh();
  return form;
}

/** The two forms (administrators). */
export async function secretForms(): Promise<HTMLElement[]> {
  const [merchants, subscriptions] = await Promise.all([
    all((cursor) => ok(api.GET('/api/v1/merchants', { params: { query: { limit: 200, cursor } } })), 2000).catch(() => []),
    all((cursor) => ok(api.GET('/api/v1/webhooks/subscriptions', { params: { query: { limit: 100, cursor } } })), 500).catch(() => []),
  ]);
  const subscriptionSetAt = new Map(subscriptions.map((s) => [s.id, s.secret_set_at]));
  return [
    secretForm({
      id: 's-chat-token',
      title: 'chatTokenTitle',
      hint: 'chatTokenHint',
      pick: 'merchant',
      choices: merchants.map((m) => ({ id: m.id, text: m.name })),
      none: 'noMerchants',
      input: 'newToken',
      invalid: 'tokenInvalid',
      minLength: 1,
      maxLength: 4096,
      state: async (id) => (await ok(api.GET('/api/v1/admin/merchants/{id}/channels', { params: { path: { id } } }))).chat_token_set_at,
      save: async (id, value) =>
        (await ok(api.PATCH('/api/v1/admin/merchants/{id}/channels', { params: { path: { id } }, body: { chat_token: value } })))
          .chat_token_set_at,
    }),
    secretForm({
      id: 's-webhook-secret',
      title: 'webhookSecretTitle',
      hint: 'webhookSecretHint',
      pick: 'subscription',
      choices: subscriptions.map((s) => ({ id: s.id, text: s.description ? `${s.description} · ${s.url}` : s.url })),
      none: 'noSubscriptions',
      input: 'newSecret',
      invalid: 'secretInvalid',
      minLength: 16,
      maxLength: 256,
      state: async (id) => subscriptionSetAt.get(id) ?? null,
      save: async (id, value) => {
        const s = await ok(
          api.POST('/api/v1/webhooks/subscriptions/{id}/rotate-secret', { params: { path: { id } }, body: { secret: value } }),
        );
        subscriptionSetAt.set(id, s.secret_set_at);
        return s.secret_set_at;
      },
    }),
  ];
}
