import { newId } from './ids.js';
import type { Tx } from './db/index.js';
import type { Actor } from './auth.js';
import { insertAuditRow } from './repo.js';

export interface AuditInput {
  action: string;
  entityType: string;
  entityId: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

const SECRET_FIELDS = /password|token|pin|secret|hash/i;

function clean(v: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (!v) return null;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) out[k] = SECRET_FIELDS.test(k) ? '[redacted]' : val instanceof Date ? val.toISOString() : val;
  return out;
}

/** Keeps only the fields that changed, so an audit row says what the action did. */
export function diff(before: Record<string, unknown> | null | undefined, after: Record<string, unknown> | null | undefined) {
  if (!before || !after) return { before: clean(before), after: clean(after) };
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const x = before[key] instanceof Date ? (before[key] as Date).toISOString() : before[key];
    const y = after[key] instanceof Date ? (after[key] as Date).toISOString() : after[key];
    if (JSON.stringify(x) !== JSON.stringify(y)) {
      b[key] = x;
      a[key] = y;
    }
  }
  return { before: clean(b), after: clean(a) };
}

/** Writes an audit row in the caller's transaction. */
export async function recordAudit(tx: Tx, actor: Pick<Actor, 'organizationId' | 'userId' | 'requestId'>, input: AuditInput): Promise<void> {
  const d = diff(input.before, input.after);
  await insertAuditRow(tx, {
    organizationId: actor.organizationId,
    id: newId(),
    actorUserId: actor.userId,
    action: input.action,
    entityType: input.entityType,
    entityId: input.entityId,
    before: JSON.stringify(d.before),
    after: JSON.stringify(d.after),
    requestId: actor.requestId ?? null,
  });
}
