import http from 'node:http';

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
}

/** A real SSE client over node:http that parses frames as a browser's EventSource would. */
export class SseClient {
  readonly frames: SseFrame[] = [];
  readonly comments: string[] = [];
  ended = false;
  private buffer = '';
  private waiters: (() => void)[] = [];

  private constructor(
    readonly status: number,
    readonly headers: http.IncomingHttpHeaders,
    readonly res: http.IncomingMessage,
    private readonly req: http.ClientRequest,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.feed(chunk));
    const end = () => {
      this.ended = true;
      this.wake();
    };
    res.on('end', end);
    res.on('close', end);
    res.on('error', end);
  }

  /** Opens a stream; resolves when the response headers arrive (any status). */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) =>
        resolve(new SseClient(res.statusCode ?? 0, res.headers, res, req)),
      );
      req.on('error', reject);
    });
  }

  /** The body of a non-stream (error) response. */
  async body(): Promise<string> {
    await this.until(() => this.ended, 5_000, 'end of body');
    return this.buffer;
  }

  /** Frames that carry an event (not the initial `retry:` frame). */
  get events(): SseFrame[] {
    return this.frames.filter((f) => f.event !== undefined);
  }

  async waitFor(pred: (f: SseFrame) => boolean, timeoutMs = 30_000): Promise<SseFrame> {
    let hit: SseFrame | undefined;
    await this.until(() => (hit = this.frames.find(pred)) !== undefined, timeoutMs, 'frame');
    return hit!;
  }

  async waitForEvents(n: number, timeoutMs = 30_000): Promise<SseFrame[]> {
    await this.until(() => this.events.length >= n, timeoutMs, `${n} events (have ${this.events.length})`);
    return this.events;
  }

  async until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      if (this.ended && !cond()) {
        if (what.startsWith('end')) return;
        throw new Error(`stream ended while waiting for ${what}`);
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Closed by this client (its `ended` follows once the socket has closed). */
  closed = false;

  close(): void {
    this.closed = true;
    this.req.destroy();
    this.res.destroy();
  }

  private feed(chunk: string) {
    if (this.status !== 200) {
      this.buffer += chunk;
      return;
    }
    this.buffer += chunk;
    let idx: number;
    while ((idx = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, idx);
      this.buffer = this.buffer.slice(idx + 2);
      const frame: SseFrame = {};
      let hasField = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon >= 0 ? line.slice(0, colon) : line;
        const value = colon >= 0 ? line.slice(colon + 1).replace(/^ /, '') : '';
        if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
        else if (field === 'id' || field === 'event' || field === 'retry') frame[field] = value;
        else continue;
        hasField = true;
      }
      if (hasField) this.frames.push(frame);
    }
    this.wake();
  }

  private wake() {
    const w = this.waiters.splice(0);
    for (const f of w) f();
  }
}

export const json = (f: SseFrame) => JSON.parse(f.data ?? 'null');
