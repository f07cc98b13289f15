import { createHash } from 'node:crypto';
import { AppError } from './errors.js';
import type { Tx } from './db/index.js';
import { claimIdempotencyKey, findIdempotencyKey, storeIdempotentResponse } from './repo.js';

export interface IdempotentResult<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** Stable hash of a request body (key order does not matter). */
export function requestHash(body: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as any)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(canonical(body ?? null)))
    .digest('hex');
}

export function validateIdempotencyKey(key: unknown): string | null {
  if (key === undefined || key === null || key === '') return null;
  if (typeof key !== 'string' || !/^[A-Za-z0-9._:-]{8,128}$/.test(key)) {
    throw AppError.badRequest(
      'Idempotency-Key must be 8..128 characters of [A-Za-z0-9._:-]',
      [{ field: 'Idempotency-Key', message: 'invalid' }],
      'INVALID_IDEMPOTENCY_KEY',
    );
  }
  return key;
}

/**
 * Runs `work` at most once per (organization, scope, key), inside the caller's transaction.
 * The key row is inserted first: a concurrent duplicate blocks on the unique index until the first
 * commits, then reads its stored response. Same key with a different body is 422 IDEMPOTENCY_KEY_REUSED.
 */
export async function once<T>(
  tx: Tx,
  args: { organizationId: string; scope: string; key: string; hash: string },
  work: () => Promise<{ status: number; body: T }>,
): Promise<IdempotentResult<T>> {
  if (!(await claimIdempotencyKey(tx, args))) {
    const prior = await findIdempotencyKey<T>(tx, args);
    if (!prior) throw AppError.conflict('The request with this Idempotency-Key is still in progress', 'IDEMPOTENCY_IN_PROGRESS');
    if (prior.request_hash !== args.hash) {
      throw AppError.unprocessable('This Idempotency-Key was used with a different request body', 'IDEMPOTENCY_KEY_REUSED');
    }
    if (prior.status_code === null)
      throw AppError.conflict('The request with this Idempotency-Key is still in progress', 'IDEMPOTENCY_IN_PROGRESS');
    return { status: prior.status_code, body: prior.response, replayed: true };
  }
  const result = await work();
  await storeIdempotentResponse(tx, args, result.status, JSON.stringify(result.body));
  return { ...result, replayed: false };
}
