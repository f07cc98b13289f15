import { newId } from './ids.js';
import type { Tx } from './db/index.js';
import { insertEventAndNotify, insertEventsAndNotify } from './repo.js';

export const EVENTS_CHANNEL = 'app_events';

export interface EventInput {
  type: string;
  entityType: string;
  entityId: string;
  territoryId?: string | null;
  actorUserId?: string | null;
  /** Users who see this event on their personal stream (besides dispatch and administrators). */
  audienceUserIds?: string[];
  /**
   * Of the audience, the users for whom this event is an exception alert (the staff told of a late trip): their inbox
   * keeps one unread alert per type instead of one per event. Read by the hooks, not stored with the event.
   */
  alertUserIds?: string[];
  payload?: Record<string, unknown>;
  /**
   * The entity as this transaction holds it right after the change, in the shape its module reads it (a trip's
   * `TripRow`, an order's `OrderRow`), when the emitter has it at hand: a hook that renders the entity (an outbound
   * webhook's resource) takes it instead of reading it again. Read by the hooks, not stored with the event.
   */
  current?: unknown;
}

export type { StoredEvent } from './repo.js';
import type { StoredEvent } from './repo.js';

/** Runs in the same transaction as the event (e.g. the notification inbox turns events into notification rows). */
export type EventHook = (tx: Tx, event: StoredEvent, input: EventInput) => Promise<void>;

export interface EventBus {
  /** Appends an event and runs every hook, all in the caller's transaction. */
  record(tx: Tx, organizationId: string, input: EventInput): Promise<StoredEvent>;
  /** Several events in one statement (in order), then the hooks of each, in the same order. */
  recordMany(tx: Tx, organizationId: string, inputs: EventInput[]): Promise<StoredEvent[]>;
  onRecorded(hook: EventHook): void;
}

export function createEventBus(): EventBus {
  const hooks: EventHook[] = [];
  async function record(tx: Tx, organizationId: string, input: EventInput): Promise<StoredEvent> {
    const ev = await recordEvent(tx, organizationId, input);
    for (const hook of hooks) await hook(tx, ev, input);
    return ev;
  }
  return {
    record,
    async recordMany(tx, organizationId, inputs) {
      if (inputs.length <= 1) return inputs.length ? [await record(tx, organizationId, inputs[0])] : [];
      const events = await insertEventsAndNotify(tx, organizationId, inputs.map(eventRow), EVENTS_CHANNEL);
      for (const [i, ev] of events.entries()) for (const hook of hooks) await hook(tx, ev, inputs[i]);
      return events;
    },
    onRecorded(hook) {
      hooks.push(hook);
    },
  };
}

/**
 * Appends an event in the caller's transaction and NOTIFYs every API instance; the notification is
 * delivered at commit, so a rolled-back change never announces anything.
 */
export async function recordEvent(tx: Tx, organizationId: string, input: EventInput): Promise<StoredEvent> {
  // One round trip: the row and its NOTIFY (payload {"organization_id","seq"}) in one statement.
  return insertEventAndNotify(tx, { organizationId, ...eventRow(input) }, EVENTS_CHANNEL);
}

/** The stored columns of an event (a new id; `alertUserIds` and `current` are for the hooks, not stored). */
function eventRow(input: EventInput) {
  return {
    id: newId(),
    type: input.type,
    entityType: input.entityType,
    entityId: input.entityId,
    territoryId: input.territoryId ?? null,
    actorUserId: input.actorUserId ?? null,
    audienceUserIds: input.audienceUserIds ?? [],
    payload: JSON.stringify(input.payload ?? {}),
  };
}
