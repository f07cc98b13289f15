import { hkdfSync } from 'node:crypto';

/**
 * The service's signing keys, one per purpose, each derived from the one secret (`JWT_SECRET`, or the one kept in
 * `DATA_DIR`) with HKDF-SHA-256 and a purpose label: a token or MAC made for one purpose never verifies as
 * another's (a stream token is not an access token, a recipient link MAC is not a session token).
 */
export interface SigningKeys {
  /** Access tokens (JWT, HS256). */
  accessToken: Uint8Array;
  /** Stream tokens for EventSource clients (JWT, HS256). */
  streamToken: Uint8Array;
  /** Recipient tracking link MACs. */
  recipientLink: Uint8Array;
  /** The derived successor of a rotated refresh token (its grace-window repeat). */
  refreshSuccessor: Uint8Array;
  /**
   * The raw secret, for one use only: checking recipient links issued before keys were derived per purpose
   * (their `token_version` is null; the MAC's message starts with `recipient-link:`, which no other use signs).
   * They end with their trips; nothing new is signed with it.
   */
  legacyRecipientLink: Uint8Array;
}

const LABELS = {
  accessToken: 'access-token',
  streamToken: 'stream-token',
  recipientLink: 'recipient-link',
  refreshSuccessor: 'refresh-successor',
} as const;

/** The minimum length of the secret, in characters (`JWT_SECRET` and the stored one alike). */
export const MIN_SECRET_LENGTH = 32;

/** HKDF-SHA-256 of the secret with the purpose as `info`: 32 bytes per purpose. */
export function deriveKeys(secret: string): SigningKeys {
  const ikm = new TextEncoder().encode(secret);
  const derive = (label: string) => new Uint8Array(hkdfSync('sha256', ikm, 'delivery-api', `delivery-api/${label}/v1`, 32));
  return {
    accessToken: derive(LABELS.accessToken),
    streamToken: derive(LABELS.streamToken),
    recipientLink: derive(LABELS.recipientLink),
    refreshSuccessor: derive(LABELS.refreshSuccessor),
    legacyRecipientLink: ikm,
  };
}
