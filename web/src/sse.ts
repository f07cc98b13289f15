import { api, ok } from './api';

export interface StreamEvent {
  seq: number;
  type: string;
  entity_type: string;
  entity_id: string;
  territory_id: string | null;
  payload: Record<string, unknown>;
  created_at: string;
}

const TYPES = [
  'trip.created', 'trip.assigned', 'trip.accepted', 'trip.rejected', 'trip.offer_expired', 'trip.unassigned', 'trip.location_updated',
  'trip.geofence_entered', 'trip.pickup_verified', 'trip.on_the_way', 'trip.delivery_verified', 'trip.completed', 'trip.cancelled',
  'trip.delivery_failed', 'trip.returned', 'trip.status_changed',
];

/**
 * The organization's event stream (dispatch, administrators) or the sub-administrator's territories, with
 * EventSource and a short-lived stream token (EventSource cannot send headers). On a break it takes a new
 * token and resumes after the last event it saw (`last_event_id`), so no event is missed; a `stream.reset`
 * frame asks for a full refetch.
 */
export function openStream(kind: 'organization' | 'territories', on: { event: (e: StreamEvent) => void; reset: () => void; state: (live: boolean) => void }): () => void {
  let last: string | null = null;
  let es: EventSource | null = null;
  let stopped = false;
  let retry = 1000;

  const connect = async () => {
    if (stopped) return;
    try {
      const tok = await ok(api.POST('/api/v1/realtime/tokens', { body: { stream: kind } }));
      const q = new URLSearchParams({ stream_token: tok.stream_token });
      if (last) q.set('last_event_id', last);
      es = new EventSource(`/api/v1/realtime/${kind}/stream?${q}`);
    } catch {
      setTimeout(connect, (retry = Math.min(retry * 2, 30_000)));
      return;
    }
    es.onopen = () => {
      retry = 1000;
      on.state(true);
    };
    const handle = (m: MessageEvent) => {
      if (m.lastEventId) last = m.lastEventId;
      try {
        on.event(JSON.parse(m.data) as StreamEvent);
      } catch {
        /* not JSON: ignored */
      }
    };
    for (const type of TYPES) es.addEventListener(type, handle);
    es.onmessage = handle;
    es.addEventListener('stream.reset', (m) => {
      if ((m as MessageEvent).lastEventId) last = (m as MessageEvent).lastEventId;
      on.reset();
    });
    es.onerror = () => {
      // The stream token is single-use for opening: reconnect ourselves with a fresh one and the resume point.
      es?.close();
      on.state(false);
      if (!stopped) setTimeout(connect, retry);
    };
  };
  void connect();
  return () => {
    stopped = true;
    es?.close();
  };
}
