import type { Config } from '../../config.js';

export type ChatMode = 'link' | 'cloud_api';

export interface ChannelSettingsRow {
  organization_id: string;
  merchant_id: string;
  chat_enabled: boolean;
  chat_mode: ChatMode;
  chat_phone: string | null;
  chat_phone_number_id: string | null;
  chat_account_id: string | null;
  chat_secret_ref: string | null;
  order_notifications: boolean;
  status_notifications: boolean;
  created_at: Date | null;
  updated_at: Date | null;
}

export const SETTINGS_COLUMNS =
  'organization_id, merchant_id, chat_enabled, chat_mode, chat_phone, chat_phone_number_id, chat_account_id, chat_secret_ref, order_notifications, status_notifications, created_at, updated_at';

/**
 * Secret references a merchant may store. `env:` names are confined to `CHAT_*` so that a merchant cannot
 * make the server send another of its secrets (e.g. the JWT key) to the chat provider.
 */
export const SECRET_REF_PATTERN = '^(env:CHAT_[A-Z0-9_]{1,100}|vault:[A-Za-z0-9_./-]{1,200})$';

export const defaultSettings = (organizationId: string, merchantId: string): ChannelSettingsRow => ({
  organization_id: organizationId,
  merchant_id: merchantId,
  chat_enabled: false,
  chat_mode: 'link',
  chat_phone: null,
  chat_phone_number_id: null,
  chat_account_id: null,
  chat_secret_ref: null,
  order_notifications: true,
  status_notifications: false,
  created_at: null,
  updated_at: null,
});

/** `env:CHAT_TOKEN_SHOP_1` -> `env:****OP_1`: enough to recognise it, never the whole reference. */
export function maskSecretRef(ref: string | null): string | null {
  if (!ref) return null;
  const i = ref.indexOf(':');
  const scheme = i > 0 ? ref.slice(0, i) : 'ref';
  const name = i > 0 ? ref.slice(i + 1) : ref;
  return `${scheme}:****${name.length > 8 ? name.slice(-4) : ''}`;
}

/** The secret behind a reference: `env:NAME` from the configuration (or the process environment). */
export function resolveSecret(ref: string | null, config: Pick<Config, 'raw'>): { value: string | null; issue: string | null } {
  if (!ref) return { value: null, issue: 'chat_secret_ref is not set' };
  if (ref.startsWith('env:')) {
    const name = ref.slice(4);
    const value = config.raw[name] ?? process.env[name];
    return value ? { value, issue: null } : { value: null, issue: `the secret reference ${maskSecretRef(ref)} is not set on the server` };
  }
  return { value: null, issue: `secret references of scheme '${ref.split(':')[0]}' are not supported by this server` };
}

/** What keeps `cloud_api` delivery from working (empty = ready); the worker and GET /merchant/channels use it. */
export function cloudApiIssues(s: Pick<ChannelSettingsRow, 'chat_phone_number_id' | 'chat_secret_ref'>, config: Pick<Config, 'raw'>): string[] {
  const issues: string[] = [];
  if (!config.raw.CHAT_CLOUD_API_URL) issues.push('the server has no chat cloud API configured (CHAT_CLOUD_API_URL)');
  if (!s.chat_phone_number_id) issues.push('chat_phone_number_id is not set');
  const secret = resolveSecret(s.chat_secret_ref, config);
  if (secret.issue) issues.push(secret.issue);
  return issues;
}

export function settingsOut(s: ChannelSettingsRow, config: Pick<Config, 'raw'>) {
  const issues: string[] = [];
  if (!s.chat_phone) issues.push('chat_phone is not set');
  if (s.chat_mode === 'cloud_api') issues.push(...cloudApiIssues(s, config));
  return {
    merchant_id: s.merchant_id,
    chat_enabled: s.chat_enabled,
    chat_mode: s.chat_mode,
    chat_phone: s.chat_phone,
    chat_phone_number_id: s.chat_phone_number_id,
    chat_account_id: s.chat_account_id,
    chat_secret_ref: maskSecretRef(s.chat_secret_ref),
    chat_secret_configured: s.chat_secret_ref !== null,
    order_notifications: s.order_notifications,
    status_notifications: s.status_notifications,
    delivery_ready: issues.length === 0,
    configuration_issues: issues,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}
