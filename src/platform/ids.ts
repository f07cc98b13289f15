import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { uuidv7 } from 'uuidv7';

/** Text ids: UUIDv7, time-sortable, so `ORDER BY id` is creation order and a cursor is just an id. */
export const newId = (): string => uuidv7();

export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** 256 bits of randomness, URL-safe. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** A numeric PIN with uniform digits (crypto RNG). */
export const randomPin = (digits = 4): string => String(randomInt(0, 10 ** digits)).padStart(digits, '0');

export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
