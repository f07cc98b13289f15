import createClient from 'openapi-fetch';
import type { Readable } from 'openapi-typescript-helpers';
import type { components, paths } from './api-types';

/** The API's own types (web/src/api-types.ts, generated from the served OpenAPI document by `npm run web:types`). */
export type Schemas = components['schemas'];
type Json<P extends keyof paths, M extends 'get' | 'post', S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? Readable<T>
  : never;
export type Trip = Json<'/api/v1/trips/{id}', 'get', 200>;
export type Driver = Json<'/api/v1/drivers', 'get', 200>['data'][number];
export type DispatchPlan = Json<'/api/v1/admin/dispatch-batches/optimize', 'post', 201>;
export type Hub = Json<'/api/v1/hubs/{id}', 'get', 200>;
export type User = Schemas['User'];
export type TripStatus = Trip['status'];

interface Tokens {
  access: string;
  refresh: string;
  user: User;
}

let KEY = 'console.session';
let store: Storage = sessionStorage;
const read = (): Tokens | null => {
  try {
    return JSON.parse(store.getItem(KEY) ?? 'null') as Tokens | null;
  } catch {
    return null;
  }
};
let tokens: Tokens | null = read();
let refreshing: Promise<boolean> | null = null;
/** Why a session ended: the user logged out, or the server refused to renew it (expired, revoked). */
export type SessionEnd = 'logout' | 'expired';
const listeners = new Set<(why: SessionEnd) => void>();

function save(next: Tokens | null) {
  tokens = next;
  if (next) store.setItem(KEY, JSON.stringify(next));
  else store.removeItem(KEY);
}

/**
 * Where the session is kept (default: this tab, `sessionStorage`). An installed app keeps it in `localStorage`
 * under its own key, so reopening it finds the driver still logged in. Call before anything else of this module.
 */
export function keepSessionIn(storage: Storage, key: string): void {
  store = storage;
  KEY = key;
  tokens = read();
}

export const session = {
  user: () => tokens?.user ?? null,
  /** Called when the session ends (logout, refresh refused). */
  onEnd: (fn: (why: SessionEnd) => void) => listeners.add(fn),
};

/** The access token expired: rotate the refresh token once (concurrent callers share the rotation). */
async function refresh(): Promise<boolean> {
  if (!tokens) return false;
  refreshing ??= (async () => {
    const res = await fetch('/api/v1/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: tokens!.refresh }),
    });
    if (!res.ok) {
      save(null);
      listeners.forEach((fn) => fn('expired'));
      return false;
    }
    const body = (await res.json()) as paths['/api/v1/auth/refresh']['post']['responses'][200]['content']['application/json'];
    save({ access: body.access_token, refresh: body.refresh_token, user: body.user });
    return true;
  })().finally(() => (refreshing = null));
  return refreshing;
}

/** fetch with the bearer token; a 401 refreshes the tokens and retries once. */
async function authFetch(input: Request): Promise<Response> {
  const retry = input.clone();
  const send = (req: Request) => {
    if (tokens) req.headers.set('authorization', `Bearer ${tokens.access}`);
    return fetch(req);
  };
  const res = await send(input);
  if (res.status !== 401 || !tokens || input.url.includes('/auth/')) return res;
  return (await refresh()) ? send(retry) : res;
}

export const api = createClient<paths>({ baseUrl: '', fetch: authFetch });

/** A plain fetch with the session's bearer token (and the same refresh on 401), for what the typed client cannot send (a binary upload). */
export const authorizedFetch = (url: string, init?: RequestInit): Promise<Response> => authFetch(new Request(url, init));

/** A failed plain fetch as the typed client's failures are thrown: an Error carrying its problem (errorText reads it). */
export async function problemOf(res: Response): Promise<Error> {
  return Object.assign(new Error(`HTTP ${res.status}`), {
    problem: { status: res.status, ...((await res.json().catch(() => ({}))) as object) },
  });
}

/** Downloads what the server answers to the session (a workbook, a report, a template) under the name it gives. */
export async function downloadFile(url: string, fallbackName: string): Promise<void> {
  const res = await authorizedFetch(url);
  if (!res.ok) throw await problemOf(res);
  const href = URL.createObjectURL(await res.blob());
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

export interface Problem {
  status: number;
  title?: string;
  detail?: string;
  code?: string;
}

/** The data of a call, or throws its problem (shown by the caller). */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const r = await call;
  if (r.error !== undefined || !r.response.ok) {
    const p = (r.error ?? {}) as Partial<Problem>;
    throw Object.assign(new Error(p.detail ?? p.title ?? `HTTP ${r.response.status}`), { problem: { status: r.response.status, ...p } });
  }
  return r.data as T;
}

export async function login(email: string, password: string): Promise<User> {
  const body = await ok(api.POST('/api/v1/auth/login', { body: { email, password } }));
  save({ access: body.access_token, refresh: body.refresh_token, user: body.user });
  return body.user;
}

export async function logout(): Promise<void> {
  if (tokens) await api.POST('/api/v1/auth/logout').catch(() => undefined);
  save(null);
  listeners.forEach((fn) => fn('logout'));
}

/** Every page of a cursor list (the console shows whole fleets; at most `max` items). */
export async function all<T>(
  page: (cursor: string | undefined) => Promise<{ data: T[]; next_cursor: string | null }>,
  max = 5000,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const r = await page(cursor);
    out.push(...r.data);
    cursor = r.next_cursor ?? undefined;
  } while (cursor && out.length < max);
  return out;
}
