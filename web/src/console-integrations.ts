import './console-integrations.css';
import { all, api, authorizedFetch, downloadFile, ok, problemOf } from './api';
import { $, clear, h } from './dom';
import { errorText, fmtTime, getLang, t, tf, type Key } from './i18n';
import { importRowErrorsEs } from './i18n-integrations';

/**
 * The console's integrations view (#/integrations), for administrators: API keys (created with a name and scopes, the
 * key shown once with a copy button, revoked after a confirmation), spreadsheet imports (a dry run first with its
 * errors by row and column, then the import; past imports with their progress and report; the templates), and the
 * GPS apps bound to drivers (Traccar Client: bind, the server URL shown once, revoke), and every merchant's connected shops
 * (WooCommerce, Shopify: listed, disconnected after a confirmation).
 */

type Toast = (message: string, kind?: 'info' | 'error') => void;
type ImportKind = 'trips' | 'express_requests';
type ImportOut = Awaited<ReturnType<typeof listImports>>[number];

/** The scopes an administrator may grant (the merchant-only ones are not offered here). */
const ADMIN_SCOPES = ['trips:read', 'trips:write', 'events:read'] as const;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const kindPath = (k: ImportKind) => (k === 'trips' ? 'trips' : 'express-requests');

const listImports = async () => (await ok(api.GET('/api/v1/imports', { params: { query: { limit: 20 } } }))).data;

/** A value shown once (a new key, a device's URL): selectable text and a copy button; gone when dismissed or redrawn. */
function shownOnce(id: string, intro: Key, value: string, onDone: () => void): HTMLElement {
  const field = h('input', { id: `${id}-value`, class: 'once-value', readonly: true, value, 'aria-label': t(intro), spellcheck: 'false' });
  const copy = h('button', { type: 'button', id: `${id}-copy`, class: 'big' }, t('keyCopy'));
  copy.addEventListener('click', async () => {
    field.select();
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // No clipboard permission (an http origin): the value is selected for a manual copy.
      document.execCommand?.('copy');
    }
    copy.textContent = t('keyCopied');
  });
  return h(
    'div',
    { class: 'once', id, role: 'status' },
    h('p', { class: 'once-intro' }, h('strong', null, t(intro))),
    h('div', { class: 'once-row' }, field, copy),
    h('button', { type: 'button', class: 'big', id: `${id}-done`, onclick: onDone }, t('keyDone')),
  );
}

function keysPanel(toast: Toast): HTMLElement {
  const list = h('div', { class: 'body', id: 'keys-list' }, '…');
  const once = h('div', { id: 'key-once-slot' });
  const name = h('input', { id: 'key-name', name: 'name', maxlength: 100, autocomplete: 'off', required: true });
  const boxes = ADMIN_SCOPES.map((s) => h('input', { type: 'checkbox', name: 'scope', value: s, id: `key-scope-${s.replace(':', '-')}` }));
  const error = h('p', { class: 'error', role: 'alert', id: 'key-error' });
  const submit = h('button', { type: 'submit', class: 'primary big', id: 'key-create' }, t('keyCreate'));
  const form = h(
    'form',
    { class: 'int-form', id: 'key-form', autocomplete: 'off' },
    h('div', { class: 'field' }, h('label', { for: 'key-name' }, t('keyName')), name),
    h(
      'fieldset',
      { class: 'scopes' },
      h('legend', null, t('keyScopes')),
      boxes.map((b, i) => h('label', { class: 'check' }, b, t(`scope_${ADMIN_SCOPES[i]}` as Key))),
    ),
    submit,
    error,
  );

  async function load() {
    const keys = await all((cursor) => ok(api.GET('/api/v1/api-keys', { params: { query: { limit: 100, cursor } } })), 500);
    clear(
      list,
      keys.length === 0
        ? h('p', null, t('keyNone'))
        : h(
            'table',
            { class: 'int-cards' },
            h(
              'thead',
              null,
              h('tr', null, h('th', null, t('keyName')), h('th', null, t('keyScopes')), h('th', null, t('keyLastUsed')), h('th', null, '')),
            ),
            h(
              'tbody',
              null,
              keys.map((k) =>
                h(
                  'tr',
                  { 'data-key': k.id, class: k.revoked_at ? 'revoked' : undefined },
                  h('td', null, h('strong', null, k.name), h('div', { class: 'muted mono key-hint' }, k.key_hint)),
                  h(
                    'td',
                    null,
                    k.scopes.map((s) => h('span', { class: 'badge' }, t(`scope_${s}` as Key) ?? s)),
                  ),
                  h('td', null, k.last_used_at ? fmtTime(k.last_used_at) : t('keyNeverUsed')),
                  h(
                    'td',
                    null,
                    k.revoked_at
                      ? h('span', { class: 'muted' }, `${t('keyRevoked')} ${fmtTime(k.revoked_at)}`)
                      : h(
                          'button',
                          {
                            type: 'button',
                            class: 'big danger revoke',
                            onclick: async () => {
                              if (!confirm(tf('keyRevokeConfirm', { name: k.name }))) return;
                              try {
                                await ok(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: k.id } } }));
                                await load();
                              } catch (e) {
                                toast(`${t('error')}: ${errorText(e)}`, 'error');
                              }
                            },
                          },
                          t('keyRevoke'),
                        ),
                  ),
                ),
              ),
            ),
          ),
    );
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    const scopes = boxes.filter((b) => b.checked).map((b) => b.value as (typeof ADMIN_SCOPES)[number]);
    if (!name.value.trim() || !scopes.length) return void (error.textContent = t('keyNameRequired'));
    submit.disabled = true;
    try {
      const k = await ok(api.POST('/api/v1/api-keys', { body: { name: name.value.trim(), scopes } }));
      form.reset();
      clear(
        once,
        shownOnce('key-once', 'keyOnce', k.key, () => clear(once)),
      );
      $('#key-once-value', once).focus();
      await load();
    } catch (err) {
      error.textContent = errorText(err);
    } finally {
      submit.disabled = false;
    }
  });
  void load().catch((e) => clear(list, h('p', { class: 'error', role: 'alert' }, errorText(e))));
  return h(
    'section',
    { class: 'int-panel', id: 'int-keys', 'aria-labelledby': 'int-keys-title' },
    h('h2', { id: 'int-keys-title' }, t('keysTitle')),
    h('p', { class: 'hint' }, t('keysHint')),
    form,
    once,
    list,
  );
}

function importsPanel(toast: Toast): HTMLElement {
  const kind = h(
    'select',
    { id: 'imp-kind', name: 'kind' },
    (['trips', 'express_requests'] as const).map((k) => h('option', { value: k }, t(`importKind_${k}`))),
  );
  const file = h('input', { id: 'imp-file', name: 'file', type: 'file', accept: `.csv,.xlsx,text/csv,${XLSX_TYPE}` });
  const mode = h(
    'select',
    { id: 'imp-mode', name: 'mode' },
    (['all_or_nothing', 'valid_only'] as const).map((m) => h('option', { value: m }, t(`importMode_${m}`))),
  );
  const dry = h('button', { type: 'button', class: 'big primary', id: 'imp-dry' }, t('importDry'));
  const run = h('button', { type: 'button', class: 'big', id: 'imp-run', disabled: true }, t('importRun'));
  const result = h('div', { id: 'imp-result', role: 'status' });
  const past = h('div', { class: 'body', id: 'imp-list' }, '…');
  const template = (format: 'csv' | 'xlsx') =>
    h(
      'button',
      {
        type: 'button',
        class: 'big link',
        id: `imp-template-${format}`,
        onclick: () =>
          downloadFile(
            `/api/v1/imports/${kindPath(kind.value as ImportKind)}/template?format=${format}`,
            `${kindPath(kind.value as ImportKind)}-template.${format}`,
          ).catch((e) => toast(`${t('error')}: ${errorText(e)}`, 'error')),
      },
      t(format === 'csv' ? 'importTemplateCsv' : 'importTemplateXlsx'),
    );
  // The import is offered for the file (and kind) a dry run just checked.
  let checked: { file: File; kind: string } | null = null;
  const invalidate = () => {
    checked = null;
    run.disabled = true;
  };
  file.addEventListener('change', () => {
    invalidate();
    clear(result);
  });
  kind.addEventListener('change', invalidate);

  /** The row errors of a dry run or a refused import: row, column, code, message. */
  const errorTable = (errors: ImportOut['errors']) =>
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { id: 'imp-errors' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { class: 'num' }, t('importRow')),
            h('th', null, t('importColumn')),
            h('th', null, t('importCode')),
            h('th', null, t('importMessage')),
          ),
        ),
        h(
          'tbody',
          null,
          errors.map((er) =>
            h(
              'tr',
              { 'data-row': String(er.row) },
              h('td', { class: 'num' }, String(er.row)),
              h('td', { class: 'mono' }, er.column ?? '—'),
              h('td', { class: 'mono' }, er.code),
              h('td', null, (getLang() === 'es' && importRowErrorsEs[er.code]) || er.message),
            ),
          ),
        ),
      ),
    );

  function summary(out: ImportOut) {
    const values = {
      valid: out.valid_rows,
      created: out.created_rows,
      dup: out.duplicate_rows,
      errors: out.error_rows,
      total: out.total_rows,
    };
    const text =
      out.status === 'queued' || out.status === 'running'
        ? tf('importQueued', values)
        : tf(out.dry_run ? 'importDryResult' : 'importDoneResult', values);
    return h(
      'div',
      { class: `imp-summary ${out.error_rows ? 'has-errors' : 'clean'}` },
      h('p', null, text),
      out.errors.length ? errorTable(out.errors) : null,
    );
  }

  async function send(dryRun: boolean) {
    const f = file.files?.[0];
    if (!f) return void clear(result, h('p', { class: 'error', role: 'alert' }, t('importChooseFile')));
    const type = /\.xlsx$/i.test(f.name) ? XLSX_TYPE : 'text/csv';
    const q = new URLSearchParams({ dry_run: String(dryRun), mode: mode.value, file_name: f.name.slice(0, 200) });
    dry.disabled = run.disabled = true;
    clear(result, h('p', null, '…'));
    try {
      const res = await authorizedFetch(`/api/v1/imports/${kindPath(kind.value as ImportKind)}?${q}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: f,
      });
      if (!res.ok) throw await problemOf(res);
      const out = (await res.json()) as ImportOut;
      clear(result, summary(out));
      checked = dryRun && out.valid_rows > 0 ? { file: f, kind: kind.value } : null;
      await loadPast();
    } catch (e) {
      // A refused import keeps the file checked: the caller may choose to import its valid rows only.
      if (dryRun) checked = null;
      const p = (e as { problem?: { row_errors?: ImportOut['errors'] } }).problem;
      clear(result, h('p', { class: 'error', role: 'alert' }, errorText(e)), p?.row_errors?.length ? errorTable(p.row_errors) : null);
    } finally {
      dry.disabled = false;
      run.disabled = !checked || checked.file !== file.files?.[0] || checked.kind !== kind.value;
    }
  }
  dry.addEventListener('click', () => void send(true));
  run.addEventListener('click', () => void send(false));

  let poll: ReturnType<typeof setTimeout> | null = null;
  async function loadPast() {
    if (poll) clearTimeout(poll);
    const rows = await listImports();
    clear(
      past,
      rows.length === 0
        ? h('p', null, t('importNone'))
        : h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              { id: 'imp-past', class: 'int-cards' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  h('th', null, t('created')),
                  h('th', null, t('importKind')),
                  h('th', null, t('status')),
                  h('th', null, t('importProgress')),
                  h('th', null, t('importResult')),
                  h('th', null, ''),
                ),
              ),
              h(
                'tbody',
                null,
                rows.map((r) =>
                  h(
                    'tr',
                    { 'data-import': r.id },
                    h('td', null, fmtTime(r.created_at), h('div', { class: 'muted' }, r.file_name ?? r.format.toUpperCase())),
                    h('td', null, t(`importKind_${r.kind}`), r.dry_run ? h('span', { class: 'badge' }, t('importDryRunTag')) : null),
                    h('td', null, t(`importStatus_${r.status}`)),
                    h(
                      'td',
                      null,
                      h('progress', { max: String(Math.max(1, r.total_rows)), value: String(r.processed_rows) }),
                      h('span', { class: 'muted' }, ` ${r.processed_rows}/${r.total_rows}`),
                    ),
                    h(
                      'td',
                      null,
                      tf('importCounts', { ok: r.dry_run ? r.valid_rows : r.created_rows, dup: r.duplicate_rows, errors: r.error_rows }),
                    ),
                    h(
                      'td',
                      null,
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'big link report',
                          onclick: () =>
                            downloadFile(`/api/v1/imports/${r.id}/report`, `import-${r.id}.csv`).catch((e) =>
                              toast(`${t('error')}: ${errorText(e)}`, 'error'),
                            ),
                        },
                        t('importReport'),
                      ),
                    ),
                  ),
                ),
              ),
            ),
          ),
    );
    // A background import shows its progress while the view is open.
    if (rows.some((r) => r.status === 'queued' || r.status === 'running') && past.isConnected)
      poll = setTimeout(() => void loadPast().catch(() => undefined), 2000);
  }
  void loadPast().catch((e) => clear(past, h('p', { class: 'error', role: 'alert' }, errorText(e))));

  return h(
    'section',
    { class: 'int-panel', id: 'int-imports', 'aria-labelledby': 'int-imports-title' },
    h('h2', { id: 'int-imports-title' }, t('importsTitle')),
    h('p', { class: 'hint' }, t('importsHint')),
    h(
      'div',
      { class: 'int-form imp-form' },
      h('div', { class: 'field' }, h('label', { for: 'imp-kind' }, t('importKind')), kind),
      h('div', { class: 'field' }, h('label', { for: 'imp-file' }, t('importFile')), file),
      h('div', { class: 'field' }, h('label', { for: 'imp-mode' }, t('importMode')), mode),
      h('div', { class: 'actions' }, dry, run),
      h('div', { class: 'actions' }, template('csv'), template('xlsx')),
    ),
    result,
    h('h3', null, t('importPast')),
    past,
  );
}

function gpsPanel(toast: Toast): HTMLElement {
  const driver = h('select', { id: 'gps-driver', name: 'driver' });
  const identifier = h('input', {
    id: 'gps-identifier',
    name: 'identifier',
    maxlength: 100,
    pattern: '[A-Za-z0-9._:\\-]+',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const bind = h('button', { type: 'submit', class: 'big primary', id: 'gps-bind' }, t('gpsBind'));
  const error = h('p', { class: 'error', role: 'alert', id: 'gps-error' });
  const once = h('div', { id: 'gps-once-slot' });
  const list = h('div', { class: 'body', id: 'gps-list' });
  const form = h(
    'form',
    { class: 'int-form', id: 'gps-form', autocomplete: 'off' },
    h('div', { class: 'field' }, h('label', { for: 'gps-driver' }, t('gpsDriver')), driver),
    h('div', { class: 'field' }, h('label', { for: 'gps-identifier' }, t('gpsIdentifier')), identifier),
    bind,
    error,
  );

  async function load() {
    if (!driver.value) return;
    const id = driver.value;
    const devices = (await ok(api.GET('/api/v1/drivers/{id}/gps-devices', { params: { path: { id }, query: { limit: 100 } } }))).data;
    clear(
      list,
      devices.length === 0
        ? h('p', null, t('gpsNone'))
        : h(
            'table',
            { class: 'int-cards' },
            h('thead', null, h('tr', null, h('th', null, t('gpsIdentifier')), h('th', null, t('gpsLastSeen')), h('th', null, ''))),
            h(
              'tbody',
              null,
              devices.map((d) =>
                h(
                  'tr',
                  { 'data-device': d.id, class: d.revoked_at ? 'revoked' : undefined },
                  h('td', { class: 'mono' }, d.device_identifier),
                  h('td', null, d.last_seen_at ? fmtTime(d.last_seen_at) : t('keyNeverUsed')),
                  h(
                    'td',
                    null,
                    d.revoked_at
                      ? h('span', { class: 'muted' }, `${t('keyRevoked')} ${fmtTime(d.revoked_at)}`)
                      : h(
                          'button',
                          {
                            type: 'button',
                            class: 'big danger revoke',
                            onclick: async () => {
                              if (!confirm(tf('gpsRevokeConfirm', { name: d.device_identifier }))) return;
                              try {
                                await ok(
                                  api.DELETE('/api/v1/drivers/{id}/gps-devices/{deviceId}', { params: { path: { id, deviceId: d.id } } }),
                                );
                                await load();
                              } catch (e) {
                                toast(`${t('error')}: ${errorText(e)}`, 'error');
                              }
                            },
                          },
                          t('keyRevoke'),
                        ),
                  ),
                ),
              ),
            ),
          ),
    );
  }
  driver.addEventListener('change', () => {
    clear(once);
    void load().catch((e) => clear(list, h('p', { class: 'error', role: 'alert' }, errorText(e))));
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    if (!driver.value || !identifier.value.trim()) return;
    bind.disabled = true;
    try {
      const d = await ok(
        api.POST('/api/v1/drivers/{id}/gps-devices', {
          params: { path: { id: driver.value } },
          body: { device_identifier: identifier.value.trim() },
        }),
      );
      identifier.value = '';
      clear(
        once,
        shownOnce('gps-once', 'gpsOnce', `${location.origin}${d.url_path}`, () => clear(once)),
      );
      await load();
    } catch (err) {
      error.textContent = errorText(err);
    } finally {
      bind.disabled = false;
    }
  });
  void all((cursor) => ok(api.GET('/api/v1/drivers', { params: { query: { status: 'approved', limit: 200, cursor } } })), 2000).then(
    (drivers) => {
      if (!drivers.length) return void clear(list, h('p', null, t('gpsNoDrivers')));
      clear(
        driver,
        drivers.map((d) => h('option', { value: d.id }, d.display_name)),
      );
      void load().catch((e) => clear(list, h('p', { class: 'error', role: 'alert' }, errorText(e))));
    },
    (e) => clear(list, h('p', { class: 'error', role: 'alert' }, errorText(e))),
  );
  return h(
    'section',
    { class: 'int-panel', id: 'int-gps', 'aria-labelledby': 'int-gps-title' },
    h('h2', { id: 'int-gps-title' }, t('gpsTitle')),
    h('p', { class: 'hint' }, t('gpsHint')),
    form,
    once,
    list,
  );
}

function shopsPanel(toast: Toast): HTMLElement {
  const list = h('div', { class: 'body', id: 'shops-list' }, '…');

  async function load() {
    const [rows, merchants] = await Promise.all([
      all((cursor) => ok(api.GET('/api/v1/shops/connections', { params: { query: { limit: 100, cursor } } })), 1000),
      all((cursor) => ok(api.GET('/api/v1/merchants', { params: { query: { limit: 200, cursor } } })), 2000).catch(() => []),
    ]);
    const merchantName = new Map(merchants.map((m) => [m.id, m.name]));
    clear(
      list,
      rows.length === 0
        ? h('p', null, t('shopsNone'))
        : h(
            'table',
            { class: 'int-cards' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', null, t('merchant')),
                h('th', null, t('shopPlatform')),
                h('th', null, t('shopUrl')),
                h('th', null, t('shopsConnectedAt')),
                h('th', null, ''),
              ),
            ),
            h(
              'tbody',
              null,
              rows.map((c) =>
                h(
                  'tr',
                  { 'data-connection': c.id },
                  // The list answers the merchant's id; his name comes from the organization's merchants.
                  merchantName.has(c.merchant_id)
                    ? h('td', { 'data-merchant-id': c.merchant_id }, merchantName.get(c.merchant_id))
                    : h('td', { class: 'mono', 'data-merchant-id': c.merchant_id }, c.merchant_id),
                  h('td', null, h('strong', null, c.platform === 'shopify' ? 'Shopify' : 'WooCommerce')),
                  h('td', { class: 'mono' }, c.shop_url),
                  h('td', null, fmtTime(c.created_at)),
                  h(
                    'td',
                    null,
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'big danger disconnect',
                        onclick: async () => {
                          if (!confirm(tf('shopsDisconnectConfirm', { name: c.shop_url }))) return;
                          try {
                            await ok(
                              api.DELETE('/api/v1/shops/connections/{connection_id}', { params: { path: { connection_id: c.id } } }),
                            );
                            await load();
                          } catch (e) {
                            toast(`${t('error')}: ${errorText(e)}`, 'error');
                          }
                        },
                      },
                      t('shopDisconnect'),
                    ),
                  ),
                ),
              ),
            ),
          ),
    );
  }
  void load().catch((e) => clear(list, h('p', { class: 'error', role: 'alert' }, errorText(e))));
  return h(
    'section',
    { class: 'int-panel', id: 'int-shops', 'aria-labelledby': 'int-shops-title' },
    h('h2', { id: 'int-shops-title' }, t('shopConnections')),
    h('p', { class: 'hint' }, t('shopsHint')),
    list,
  );
}

export function renderIntegrations(main: HTMLElement, toast: Toast): void {
  clear(
    main,
    h(
      'div',
      { class: 'int-page' },
      h('h1', null, t('integrationsTitle')),
      keysPanel(toast),
      importsPanel(toast),
      gpsPanel(toast),
      shopsPanel(toast),
    ),
  );
}
