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

/** Why the stream is not live, for the page to say: the per-user limit (with its number), an ended session, anything else. */
export interface StreamDown {
  reason: 'limit' | 'session' | 'other';
  limit?: number;
  /** When the next attempt is made (ms from now); null when no attempt will be made. */
  retryInMs: number | null;
}

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;

/**
 * The organization's event stream (dispatch, administrators), the sub-administrator's territories or the caller's own
 * events (`me`: a merchant's orders and their trips), read with
 * fetch and a short-lived stream token. fetch, not EventSource: a refused stream's status and problem (429
 * STREAM_LIMIT_PER_USER with its limit, 401) are readable, so the page can say why it is not live. On a break
 * it takes a new token and resumes after the last event it saw (`last_event_id`), so no event is missed; a
 * `stream.reset` frame asks for a full refetch. Failed attempts back off exponentially with jitter (1 s to 60 s,
 * at least the server's `retry_after`); a stream that stayed open starts over at 1 s. The browser going offline
 * drops the connection at once; coming back online reconnects at once (resuming as after any break).
 */
export function openStream(
  kind: 'organization' | 'territories' | 'me',
  on: { event: (e: StreamEvent) => void; reset: () => void; state: (live: boolean, down?: StreamDown) => void },
): () => void {
  let last: string | null = null;
  let stopped = false;
  let delay = FIRST_RETRY_MS;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const abort = new AbortController();
  /** The current connection's own abort (offline drops it), and whether an attempt is under way. */
  let conn: AbortController | null = null;
  let connecting = false;
  /** Back online while an attempt was under way: its failure retries at once. */
  let soon = false;

  const later = (down: Omit<StreamDown, 'retryInMs'>, atLeastMs = 0) => {
    if (stopped) return;
    // Full jitter on the upper half: tabs refused together do not come back together.
    const wait = soon ? atLeastMs : Math.max(atLeastMs, Math.round(delay / 2 + (Math.random() * delay) / 2));
    soon = false;
    delay = Math.min(delay * 2, MAX_RETRY_MS);
    on.state(false, { ...down, retryInMs: wait });
    timer = setTimeout(() => void connect(), wait);
  };

  const dispatch = (type: string, data: string, id: string) => {
    if (id) last = id;
    if (type === 'stream.reset') return on.reset();
    try {
      on.event(JSON.parse(data) as StreamEvent);
    } catch {
      /* not JSON: ignored */
    }
  };

  const connect = async () => {
    if (stopped || connecting) return;
    connecting = true;
    try {
      await connectOnce();
    } finally {
      connecting = false;
    }
  };

  const connectOnce = async () => {
    if (timer) clearTimeout(timer);
    timer = null;
    conn = new AbortController();
    const here = conn;
    abort.signal.addEventListener('abort', () => here.abort(), { once: true });
    let res: Response;
    try {
      const tok = await ok(api.POST('/api/v1/realtime/tokens', { body: { stream: kind } }));
      const q = new URLSearchParams({ stream_token: tok.stream_token });
      if (last) q.set('last_event_id', last);
      res = await fetch(`/api/v1/realtime/${kind}/stream?${q}`, {
        headers: { accept: 'text/event-stream' },
        signal: here.signal,
        cache: 'no-store',
      });
    } catch (e) {
      const status = (e as { problem?: { status?: number } }).problem?.status;
      // A refused token request after the session ended: the page is already back at its login.
      if (status === 401) return on.state(false, { reason: 'session', retryInMs: null });
      return later({ reason: 'other' });
    }
    if (!res.ok || !res.body) {
      const problem = (await res.json().catch(() => ({}))) as { code?: string; limit?: number; retry_after?: number };
      const atLeast = (problem.retry_after ?? 0) * 1000;
      if (problem.code === 'STREAM_LIMIT_PER_USER') return later({ reason: 'limit', limit: problem.limit }, atLeast);
      return later({ reason: 'other' }, atLeast);
    }
    delay = FIRST_RETRY_MS;
    on.state(true);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let type = 'message';
    let data: string[] = [];
    let id = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let nl: number;
        while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
          if (line === '') {
            if (data.length) dispatch(type, data.join('\n'), id);
            type = 'message';
            data = [];
            id = '';
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') type = val;
          else if (field === 'data') data.push(val);
          else if (field === 'id') id = val;
        }
      }
    } catch {
      /* broken connection (or stopped) */
    }
    // The stream token is single-use for opening: reconnect with a fresh one and the resume point.
    later({ reason: 'other' });
  };
  const offline = () => conn?.abort();
  const online = () => {
    if (stopped) return;
    delay = FIRST_RETRY_MS;
    if (connecting) soon = true;
    else void connect();
  };
  window.addEventListener('offline', offline);
  window.addEventListener('online', online);
  void connect();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    abort.abort();
    window.removeEventListener('offline', offline);
    window.removeEventListener('online', online);
  };
}
