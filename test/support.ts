/** Small test helpers that load nothing of the app: re-exported by test/helpers.ts, imported directly by pure tests. */

/** A GeoJSON point, longitude first. */
export const pt = (lon: number, lat: number) => ({ type: 'Point' as const, coordinates: [lon, lat] as [number, number] });

/**
 * Waits for a condition: calls `read` until it returns something truthy and returns that, or fails after `timeout`
 * ms with `message` and the last value. The deadline is generous (a loaded machine); the wait ends as soon as it holds.
 */
export async function waitFor<T>(
  read: () => T | Promise<T>,
  { timeout = 30_000, interval = 20, message = 'condition' }: { timeout?: number; interval?: number; message?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${message} (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/**
 * Runs `fn` again after a failure, up to `attempts` times, backing off `backoffMs × attempt`. For races on
 * cluster-wide catalogs (CREATE DATABASE, CREATE ROLE from parallel test files): the winner's transaction is not
 * visible to the loser, so there is no condition to wait for, only a later attempt.
 */
export async function retry<T>(fn: () => Promise<T>, { attempts = 10, backoffMs = 50 } = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts) throw err;
      await new Promise((r) => setTimeout(r, backoffMs * attempt));
    }
  }
}

/** A fixed pause. Only where no condition exists to wait for; the caller says why. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
