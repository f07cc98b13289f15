import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from './errors.js';

/** Name of the header that carries a signed body's signature (outbound webhooks, inbound connector callbacks). */
export const SIGNATURE_HEADER = 'x-signature';
/** Accepted clock difference between the connector and us, both directions. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; several v1 values are allowed (secret rotation). */
export function signPayload(secret: string, rawBody: Buffer | string, timestamp: number): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

function parseHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

/**
 * Verifies a callback: the signature must match the raw bytes received and the timestamp must be within
 * the tolerance. Throws 401 (`WEBHOOK_SIGNATURE_MISSING`, `WEBHOOK_SIGNATURE_INVALID`, `WEBHOOK_TIMESTAMP_STALE`)
 * otherwise; returns the signing time.
 */
export function verifySignature(
  secret: string,
  rawBody: Buffer,
  header: string | string[] | undefined,
  nowSeconds = Math.floor(Date.now() / 1000),
): Date {
  if (typeof header !== 'string' || header.length === 0) {
    throw AppError.unauthorized('The X-Signature header is missing', 'WEBHOOK_SIGNATURE_MISSING');
  }
  const parsed = header.length <= 1024 ? parseHeader(header) : null;
  if (!parsed) throw AppError.unauthorized('The X-Signature header is malformed', 'WEBHOOK_SIGNATURE_INVALID');
  const expected = createHmac('sha256', secret).update(`${parsed.timestamp}.`).update(rawBody).digest();
  const matches = parsed.signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected));
  if (!matches) throw AppError.unauthorized('The signature does not match the body', 'WEBHOOK_SIGNATURE_INVALID');
  // Checked after the MAC so that an attacker learns nothing about the window from an unsigned call.
  if (Math.abs(nowSeconds - parsed.timestamp) > SIGNATURE_TOLERANCE_SECONDS) {
    throw AppError.unauthorized(
      `The signature timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS} seconds away from the server time`,
      'WEBHOOK_TIMESTAMP_STALE',
    );
  }
  return new Date(parsed.timestamp * 1000);
}
