/* A service worker for an installable page (served by the API at /<page>/sw.js, e.g. /driver/sw.js; scope /<page>/).
 * Hand-written (no Workbox: four rules are all it needs):
 * - one cache per build of the page: `pwa:<scope>:<version>`, the version being the hash of the page's shell, which the
 *   server writes into this file (a new build is a new worker, so the browser installs it at the next visit);
 * - install: fetches the page's shell (the scope URL) and every asset it names (/console/assets/..., the manifest,
 *   the icons) into that cache, so the page opens with no network;
 * - activate: deletes this page's caches of other versions (never another page's), then takes control;
 * - navigations in the scope: the network first (a new build is seen at once), the cached shell when offline;
 *   hashed assets (/console/assets/*, immutable): the cache first, stored on first use (the lazily loaded map too);
 *   the scope's other files (manifest, icons: not hashed, they may change under the same name): the network first,
 *   the cache when offline.
 * API calls are never cached here: the page keeps its own data and its queue of offline work in IndexedDB.
 * Used unchanged by every installable page: what to cache is read from the page the scope names. */
/* eslint-disable no-undef */
const SCOPE = new URL(self.registration.scope);
const VERSION = '__SHELL_VERSION__';
const PREFIX = `pwa:${SCOPE.pathname}`;
const CACHE = `${PREFIX}:${VERSION}`;
const ASSET = /^\/console\/assets\/[A-Za-z0-9._-]+$/;

async function precache() {
  const cache = await caches.open(CACHE);
  const res = await fetch(SCOPE.href, { cache: 'no-store', credentials: 'same-origin' });
  if (!res.ok) throw new Error(`shell ${res.status}`);
  const html = await res.clone().text();
  const urls = new Set();
  for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
    const u = new URL(m[1], SCOPE);
    if (u.origin === SCOPE.origin && (ASSET.test(u.pathname) || u.pathname.startsWith(SCOPE.pathname))) urls.add(u.href);
  }
  const manifest = [...urls].find((u) => u.endsWith('.webmanifest'));
  if (manifest) {
    const m = await fetch(manifest, { cache: 'no-cache' })
      .then((r) => r.json())
      .catch(() => null);
    for (const icon of m?.icons ?? []) urls.add(new URL(icon.src, SCOPE).href);
  }
  urls.delete(SCOPE.href);
  await cache.addAll([...urls].map((u) => new Request(u, { cache: 'no-cache' })));
  await cache.put(SCOPE.href, res);
}

self.addEventListener('install', (event) => {
  event.waitUntil(precache().then(() => self.skipWaiting()));
});

/** This page's caches of other builds (and of the unversioned worker before them); other pages' caches are theirs. */
async function prune() {
  for (const name of await caches.keys()) {
    if (name !== CACHE && (name === PREFIX || name.startsWith(`${PREFIX}:`))) await caches.delete(name);
  }
}

self.addEventListener('activate', (event) => {
  event.waitUntil(prune().then(() => self.clients.claim()));
});

async function shell(request) {
  const cache = await caches.open(CACHE);
  try {
    const res = await fetch(request);
    if (res.ok) await cache.put(SCOPE.href, res.clone());
    return res;
  } catch (err) {
    const hit = await cache.match(SCOPE.href);
    if (hit) return hit;
    throw err;
  }
}

async function immutable(request) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(request);
  if (hit) return hit;
  const res = await fetch(request);
  if (res.ok) await cache.put(request, res.clone());
  return res;
}

async function fresh(request) {
  const cache = await caches.open(CACHE);
  try {
    const res = await fetch(request, { cache: 'no-cache' });
    if (res.ok) await cache.put(request, res.clone());
    return res;
  } catch (err) {
    const hit = await cache.match(request);
    if (hit) return hit;
    throw err;
  }
}

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== SCOPE.origin) return;
  if (req.mode === 'navigate' && url.pathname === SCOPE.pathname) {
    event.respondWith(shell(req));
  } else if (ASSET.test(url.pathname)) {
    event.respondWith(immutable(req));
  } else if (url.pathname.startsWith(SCOPE.pathname) && !url.pathname.endsWith('/sw.js')) {
    event.respondWith(fresh(req));
  }
});
