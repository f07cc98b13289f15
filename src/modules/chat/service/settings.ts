import type { Config } from '../../../config.js';
import { decryptSecret, secretContext, SecretError } from '../../../platform/secrets.js';
import { CHAT_TOKEN_COLUMN } from '../repo.js';

export type ChatMode = 'link' | 'cloud_api';

export type { ChannelSettingsRow } from '../repo.js';
import type { ChannelSettingsRow } from '../repo.js';

/**
 * Secret references a merchant may store: only the one provisioned for him (see provisionedSecretRef).
 * The pattern keeps obvious mistakes (a pasted token, a non-chat server setting) at 400; any other
 * `env:CHAT_*` name is 422 SECRET_REF_NOT_PROVISIONED.
 */
export const SECRET_REF_PATTERN = '^env:CHAT_[A-Z0-9_]{1,200}$';

const envKey = (id: string) => id.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/**
 * The one secret a merchant's channel may use: the server setting `CHAT_SECRET_<ORGANIZATION_ID>_<MERCHANT_ID>`
 * (ids upper-cased, every character other than A-Z and 0-9 as `_`), which the operator provisions for that
 * merchant. Derived from the row's own organization and merchant, so no merchant can name another's token
 * or any other server setting; the worker checks it again before every send, so a row written before this rule
 * (or by hand) cannot send another tenant's token either. The address is no merchant's choice: the base URL is
 * the server's CHAT_CLOUD_API_URL and the phone number id is a single URL-encoded path segment.
 */
export function provisionedSecretRef(organizationId: string, merchantId: string): string {
  return `env:CHAT_SECRET_${envKey(organizationId)}_${envKey(merchantId)}`;
}

export const defaultSettings = (organizationId: string, merchantId: string): ChannelSettingsRow => ({
  organization_id: organizationId,
  merchant_id: merchantId,
  chat_enabled: false,
  chat_mode: 'link',
  chat_phone: null,
  chat_phone_number_id: null,
  chat_account_id: null,
  chat_secret_ref: null,
  chat_token: null,
  chat_token_set_at: null,
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

type SecretOwner = Pick<ChannelSettingsRow, 'organization_id' | 'merchant_id'>;

/** The secret behind a reference: only the merchant's provisioned `env:` name, from the configuration (or the process environment). */
export function resolveSecret(
  ref: string | null,
  owner: SecretOwner,
  config: Pick<Config, 'secret'>,
): { value: string | null; issue: string | null } {
  if (!ref) return { value: null, issue: 'chat_secret_ref is not set' };
  if (ref !== provisionedSecretRef(owner.organization_id, owner.merchant_id)) {
    return { value: null, issue: `the secret reference ${maskSecretRef(ref)} is not the one provisioned for this merchant` };
  }
  const name = ref.slice(4);
  const value = config.secret(name);
  return value ? { value, issue: null } : { value: null, issue: `the secret reference ${maskSecretRef(ref)} is not set on the server` };
}

/** The associated data of a merchant's stored token: its row. */
export const chatTokenContext = (organizationId: string, merchantId: string) =>
  secretContext(CHAT_TOKEN_COLUMN, [organizationId, merchantId]);

type TokenSource = Pick<ChannelSettingsRow, 'organization_id' | 'merchant_id' | 'chat_secret_ref' | 'chat_token'>;

/**
 * The channel's token: the stored one (decrypted) when set, else the legacy environment reference. `decrypt: false`
 * only says whether there is one (the API's readiness, which never reads the token).
 */
export function channelToken(
  s: TokenSource,
  config: Pick<Config, 'secret' | 'secrets'>,
  decrypt = true,
): { value: string | null; issue: string | null } {
  if (s.chat_token) {
    if (!decrypt) return { value: null, issue: null };
    if (!config.secrets) return { value: null, issue: 'the stored chat token cannot be read: the server has no SECRETS_KEY' };
    try {
      return { value: decryptSecret(config.secrets, s.chat_token, chatTokenContext(s.organization_id, s.merchant_id)), issue: null };
    } catch (err) {
      if (err instanceof SecretError) return { value: null, issue: `the stored chat token cannot be read: ${err.message}` };
      throw err;
    }
  }
  if (!s.chat_secret_ref) return { value: null, issue: 'no chat token is set (chat_token, or the legacy chat_secret_ref)' };
  return resolveSecret(s.chat_secret_ref, s, config);
}

/** What keeps `cloud_api` delivery from working (empty = ready); the worker (`decrypt`) and GET /merchant/channels use it. */
export function cloudApiIssues(
  s: TokenSource & Pick<ChannelSettingsRow, 'chat_phone_number_id'>,
  config: Pick<Config, 'settings' | 'secret' | 'secrets'>,
  decrypt = false,
): string[] {
  const issues: string[] = [];
  if (!config.settings.CHAT_CLOUD_API_URL) issues.push('the server has no chat cloud API configured (CHAT_CLOUD_API_URL)');
  if (!s.chat_phone_number_id) issues.push('chat_phone_number_id is not set');
  const token = channelToken(s, config, decrypt);
  if (token.issue) issues.push(token.issue);
  return issues;
}

export function settingsOut(s: ChannelSettingsRow, config: Pick<Config, 'settings' | 'secret' | 'secrets'>) {
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
    chat_secret_configured: s.chat_secret_ref !== null || s.chat_token !== null,
    chat_token_set: s.chat_token !== null,
    chat_token_set_at: s.chat_token_set_at,
    order_notifications: s.order_notifications,
    status_notifications: s.status_notifications,
    delivery_ready: issues.length === 0,
    configuration_issues: issues,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}
