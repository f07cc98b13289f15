import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

/**
 * The browser pages, built by `npm run build` (Vite, web/ → dist/web/) and served by this server:
 * the dispatcher console at /console, the recipient tracking page at /track/:token (also answered
 * for a browser opening the recipient link itself, /api/v1/public/tracking/:token with `Accept: text/html`), and the
 * installable pages (`PWA_PAGES`: the driver app at /driver/, the merchant's counter at /merchant/), each with its manifest, icons and service worker.
 * Hashed assets are immutable for a year; the HTML is revalidated. Compressed (brotli or gzip, by
 * Accept-Encoding). A Content-Security-Policy allowing only what the pages load: their own scripts and
 * styles, the map tile server (MAP_TILE_URL) for images, the API for data.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
export const WEB_DIR = path.join(ROOT, 'dist/web');

/** OpenStreetMap's tile server by default (its usage policy allows light use; set your own for production). `none`: no tiles. */
export const DEFAULT_TILE_URL = 'https://tile.openstreetmap.org/{z}/{x}/{y}.png';
const DEFAULT_ATTRIBUTION = '© OpenStreetMap contributors';

export interface WebSettings {
  /** `{z}/{x}/{y}` template, or '' for the plain map without tiles. */
  tileUrl: string;
  tileAttribution: string;
}

export function webSettings(raw: { MAP_TILE_URL?: string; MAP_TILE_ATTRIBUTION?: string }): WebSettings {
  const v = (raw.MAP_TILE_URL ?? '').trim();
  const tileUrl = v === '' ? DEFAULT_TILE_URL : v === 'none' ? '' : v;
  if (tileUrl) {
    let u: URL;
    try {
      u = new URL(tileUrl.replace(/\{[a-z]\}/g, '0'));
    } catch {
      throw new Error(`config: MAP_TILE_URL must be an http(s) URL template with {z}/{x}/{y} or "none", got "${v}"`);
    }
    if (!/^https?:$/.test(u.protocol) || !/\{z\}/.test(tileUrl))
      throw new Error(`config: MAP_TILE_URL must be an http(s) URL template with {z}/{x}/{y} or "none", got "${v}"`);
  }
  return { tileUrl, tileAttribution: (raw.MAP_TILE_ATTRIBUTION ?? '').trim() || (tileUrl === DEFAULT_TILE_URL ? DEFAULT_ATTRIBUTION : '') };
}

/** The tile server's origin (with `{s}` subdomains as a wildcard), for img-src; null without tiles. */
export function tileSource(tileUrl: string): string | null {
  if (!tileUrl) return null;
  const u = new URL(tileUrl.replace(/\{[xyzr]\}/g, '0').replace('{s}', 'tile-subdomain'));
  return `${u.protocol}//${u.host.replace('tile-subdomain', '*')}`;
}

export function pageCsp(s: WebSettings): string {
  const tiles = tileSource(s.tileUrl);
  return [
    "default-src 'self'",
    "script-src 'self'",
    // Leaflet positions map panes with inline style attributes.
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data:${tiles ? ` ${tiles}` : ''}`,
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "manifest-src 'self'",
  ].join('; ');
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
  '.map': 'application/json',
};
const COMPRESSIBLE = new Set(['.js', '.css', '.html', '.svg', '.json', '.map', '.webmanifest']);

/**
 * Installable pages (web apps with a manifest and a service worker), served under /<name>/ (the service worker's scope):
 * `/<name>/` the page, `/<name>/sw.js` the shared service worker (web/static/pwa/sw.js), `/<name>/manifest.webmanifest`
 * (web/static/pwa/<name>.webmanifest), `/<name>/icons/*` (web/static/pwa/icons). `/<name>` redirects to `/<name>/`.
 */
export const PWA_PAGES = ['driver', 'merchant'] as const;
type PageName = 'console' | 'tracking' | (typeof PWA_PAGES)[number];

interface Asset {
  type: string;
  raw: Buffer;
  br: Buffer | null;
  gz: Buffer | null;
  mtime: number;
}

function compressOf(ext: string, raw: Buffer): Pick<Asset, 'br' | 'gz'> {
  if (!COMPRESSIBLE.has(ext) || raw.length < 256) return { br: null, gz: null };
  return {
    br: brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } }),
    gz: gzipSync(raw, { level: 9 }),
  };
}

export async function registerWeb(
  app: FastifyInstance,
  raw: { MAP_TILE_URL?: string; MAP_TILE_ATTRIBUTION?: string },
  dir = WEB_DIR,
): Promise<void> {
  const settings = webSettings(raw);
  const csp = pageCsp(settings);
  const cache = new Map<string, Asset>();

  /** A file under dir, compressed once and kept under `key` (rebuilt when its mtime changes); null when missing. */
  async function load(rel: string, transform?: (text: string) => string, key = rel): Promise<Asset | null> {
    const file = path.join(dir, rel);
    if (!file.startsWith(dir + path.sep)) return null;
    const st = await stat(file).catch(() => null);
    if (!st?.isFile()) return null;
    const hit = cache.get(key);
    if (hit && hit.mtime === st.mtimeMs) return hit;
    const ext = path.extname(file);
    let body = await readFile(file);
    if (transform) body = Buffer.from(transform(body.toString('utf8')));
    const asset: Asset = { type: TYPES[ext] ?? 'application/octet-stream', raw: body, ...compressOf(ext, body), mtime: st.mtimeMs };
    cache.set(key, asset);
    return asset;
  }

  function send(req: FastifyRequest, reply: FastifyReply, a: Asset, cacheControl: string) {
    const accept = String(req.headers['accept-encoding'] ?? '');
    reply.header('content-type', a.type).header('cache-control', cacheControl).header('vary', 'Accept-Encoding');
    if (a.br && /\bbr\b/.test(accept)) return reply.header('content-encoding', 'br').send(a.br);
    if (a.gz && /\bgzip\b/.test(accept)) return reply.header('content-encoding', 'gzip').send(a.gz);
    return reply.send(a.raw);
  }

  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const withSettings = (html: string) =>
    html.replace(
      '<meta name="map-tiles" content="">',
      `<meta name="map-tiles" content="${escape(settings.tileUrl)}" data-attribution="${escape(settings.tileAttribution)}">`,
    );

  async function page(req: FastifyRequest, reply: FastifyReply, name: PageName) {
    const a = await load(`${name}/index.html`, withSettings);
    if (!a) throw new AppError(503, 'WEB_NOT_BUILT', 'The web pages are not built: run `npm run build`');
    reply.header('content-security-policy', csp).header('x-frame-options', 'DENY').header('referrer-policy', 'no-referrer');
    return send(req, reply, a, 'no-cache');
  }

  const hidden = { config: { auth: 'public' as const }, schema: { hide: true } };
  app.get('/console', hidden, (req, reply) => page(req, reply, 'console'));
  app.get('/console/', hidden, (req, reply) => page(req, reply, 'console'));
  app.get('/track/:token', hidden, (req, reply) => page(req, reply, 'tracking'));
  app.get('/console/assets/*', hidden, async (req, reply) => {
    const rel = (req.params as { '*': string })['*'];
    const a = /^[A-Za-z0-9._-]+$/.test(rel) ? await load(`assets/${rel}`) : null;
    if (!a) throw AppError.notFound('Asset');
    // Vite names assets by content hash: a changed file has a new name.
    return send(req, reply, a, 'public, max-age=31536000, immutable');
  });

  for (const name of PWA_PAGES) {
    app.get(`/${name}`, hidden, (_req, reply) => reply.redirect(`/${name}/`, 308));
    app.get(`/${name}/`, hidden, (req, reply) => page(req, reply, name));
    app.get(`/${name}/sw.js`, hidden, async (req, reply) => {
      // The worker names its cache after the build of the page's shell: a new build is a new worker (the browser
      // installs it at the next visit), which deletes the caches of the builds before it.
      const shell = await load(`${name}/index.html`, withSettings);
      const version = shell ? createHash('sha256').update(shell.raw).digest('hex').slice(0, 16) : 'unbuilt';
      const a = await load('pwa/sw.js', (text) => text.replace('__SHELL_VERSION__', version), `pwa/sw.js@${version}`);
      if (!a) throw AppError.notFound('Asset');
      // Revalidated, so a new worker is found at the next visit; allowed to control the page's scope only.
      reply.header('service-worker-allowed', `/${name}/`);
      return send(req, reply, a, 'no-cache');
    });
    app.get(`/${name}/manifest.webmanifest`, hidden, async (req, reply) => {
      const a = await load(`pwa/${name}.webmanifest`);
      if (!a) throw AppError.notFound('Asset');
      return send(req, reply, a, 'no-cache');
    });
    app.get(`/${name}/icons/:file`, hidden, async (req, reply) => {
      const file = (req.params as { file: string }).file;
      const a = /^[A-Za-z0-9._-]+\.png$/.test(file) ? await load(`pwa/icons/${file}`) : null;
      if (!a) throw AppError.notFound('Asset');
      return send(req, reply, a, 'public, max-age=86400');
    });
  }

  // A recipient opening the link of a message in a browser gets the tracking page; the page (and any
  // API client) reads the same address as JSON.
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'GET' || !req.url.startsWith('/api/v1/public/tracking/')) return;
    reply.header('vary', 'Accept');
    const accept = String(req.headers.accept ?? '');
    if (/\btext\/html\b/.test(accept) && !/\bapplication\/json\b/.test(accept)) return page(req, reply, 'tracking');
  });
}
