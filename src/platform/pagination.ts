import { AppError } from './errors.js';

/**
 * Cursor pagination over UUIDv7 ids (creation order): `WHERE id < $cursor ORDER BY id DESC LIMIT $limit + 1`.
 * The cursor is opaque to clients (base64url of the last id).
 */
export interface PageRequest {
  limit: number;
  after: string | null;
}

export function pageRequest(q: { limit?: number; cursor?: string }): PageRequest {
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
  if (!q.cursor) return { limit, after: null };
  let after: string;
  try {
    after = Buffer.from(q.cursor, 'base64url').toString('utf8');
  } catch {
    throw AppError.badRequest('Invalid cursor', [{ field: 'cursor', message: 'not a cursor from this API' }]);
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(after))
    throw AppError.badRequest('Invalid cursor', [{ field: 'cursor', message: 'not a cursor from this API' }]);
  return { limit, after };
}

export const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

/** Takes `limit + 1` rows fetched in id-descending order and returns the page. */
export function toPage<T extends { id: string }, R = T>(
  rows: T[],
  req: PageRequest,
  map?: (row: T) => R,
): { data: R[]; next_cursor: string | null } {
  const hasMore = rows.length > req.limit;
  const slice = hasMore ? rows.slice(0, req.limit) : rows;
  return {
    data: map ? slice.map(map) : (slice as unknown as R[]),
    next_cursor: hasMore ? encodeCursor(slice[slice.length - 1].id) : null,
  };
}
