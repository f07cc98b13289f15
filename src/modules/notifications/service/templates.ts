import type { StoredEvent } from '../../../platform/events.js';

export interface NotificationText {
  title: string;
  body: string;
}

/** Turns an event into the inbox text its audience gets; `null` = no notification for this event. */
export type NotificationTemplate = (ev: StoredEvent) => NotificationText | null;

const tripRef = (ev: StoredEvent) => {
  const code = ev.payload?.code ?? ev.payload?.reference;
  return typeof code === 'string' && code ? code : ev.entity_id.slice(-8);
};

/**
 * Inbox text per event type (English; apps localize by `type`). `trip.location_updated` is deliberately
 * absent: positions stream live and would flood the inbox and the push outbox.
 */
export const DEFAULT_TEMPLATES: Record<string, NotificationTemplate> = {
  'trip.created': (ev) => ({ title: 'New trip', body: `Trip ${tripRef(ev)} was created.` }),
  'trip.assigned': (ev) => ({ title: 'Trip assigned', body: `Trip ${tripRef(ev)} was assigned to a driver.` }),
  'trip.accepted': (ev) => ({ title: 'Trip accepted', body: `The driver accepted trip ${tripRef(ev)}.` }),
  'trip.rejected': (ev) => ({ title: 'Trip rejected', body: `The driver rejected trip ${tripRef(ev)}.` }),
  'trip.offer_expired': (ev) => ({
    title: 'Offer expired',
    body: `Trip ${tripRef(ev)} was not accepted in time and was withdrawn from its driver.`,
  }),
  'trip.geofence_entered': (ev) => ({ title: 'Driver nearby', body: `The driver of trip ${tripRef(ev)} has arrived nearby.` }),
  'trip.pickup_verified': (ev) => ({ title: 'Order picked up', body: `Trip ${tripRef(ev)} was picked up.` }),
  'trip.on_the_way': (ev) => ({ title: 'On the way', body: `Trip ${tripRef(ev)} is on the way.` }),
  'trip.delivery_verified': (ev) => ({ title: 'Delivered', body: `Trip ${tripRef(ev)} was delivered.` }),
  'trip.completed': (ev) => ({ title: 'Trip completed', body: `Trip ${tripRef(ev)} is completed.` }),
  'trip.cancelled': (ev) => ({ title: 'Trip cancelled', body: `Trip ${tripRef(ev)} was cancelled.` }),
  'trip.delivery_failed': (ev) => ({
    title: 'Delivery failed',
    body: `Trip ${tripRef(ev)} could not be delivered (${String(ev.payload.failure_reason ?? 'other').replace(/_/g, ' ')})${ev.payload.policy === 'close' ? '.' : '; the goods go back to the merchant.'}`,
  }),
  'trip.returned': (ev) => ({ title: 'Returned to merchant', body: `The goods of trip ${tripRef(ev)} were returned to the merchant.` }),
  // Exceptions (to administrators and dispatchers).
  'trip.delayed': (ev) => ({
    title: 'Trip late',
    body: `Trip ${tripRef(ev)} will miss its promise by ${Math.max(1, Math.round(Number(ev.payload.late_by_s ?? 0) / 60))} min.`,
  }),
  'trip.location_stale': (ev) => ({
    title: 'Driver GPS silent',
    body:
      ev.entity_type === 'trip'
        ? `The driver of trip ${tripRef(ev)} has sent no position recently.`
        : 'An on-duty driver has sent no position recently.',
  }),
  'trip.rejected_repeatedly': (ev) => ({
    title: 'Trip rejected again',
    body: `Trip ${tripRef(ev)} was rejected ${String(ev.payload.rejections ?? 'several')} times${ev.payload.last_reason ? ` (${String(ev.payload.last_reason)})` : ''}.`,
  }),
  'trip.pin_locked': (ev) => ({
    title: 'PIN locked',
    body: `The ${String(ev.payload.stage ?? '')} PIN of trip ${tripRef(ev)} is locked after wrong attempts.`,
  }),
};
