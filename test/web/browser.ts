import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startServer, stopServer, type ServerProcess } from '../hardening/server-process.js';
import { DEMO_PASSWORD } from '../../src/seed.js';

/**
 * What the pages' browser tests share (console, tracking, driver app, merchant counter): Debian's chromium through
 * playwright-core against the real server (src/server.ts) on the embedded database with the demo seed. Screenshots
 * go to test-artifacts/ (gitignored).
 */

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(
  (p): p is string => !!p && existsSync(p),
);
// The server always runs on the embedded database, so the PostgreSQL pass of the suite would only repeat a browser test.
const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;

/** Whether the browser tests of `file` are skipped on this run (no chromium, or the PostgreSQL pass); says why. */
export function skipBrowser(file: string): boolean {
  if (!CHROMIUM) console.warn(`SKIPPED ${file}: no chromium found (install it: apt-get install -y chromium, or set CHROMIUM_PATH)`);
  else if (ON_POSTGRES)
    console.warn(`SKIPPED ${file} on the PostgreSQL pass: its server uses the embedded database (run in the PGlite pass)`);
  return !CHROMIUM || ON_POSTGRES;
}

export interface BrowserRig {
  server: ServerProcess;
  base: string;
  browser: Browser;
  /** The server's DATA_DIR, removed on close. */
  dataDir: string;
  /** Page errors (with their stack) and Content-Security-Policy refusals of the watched pages: a test expects none. */
  problems: string[];
  watch(page: Page): void;
  /** A screenshot in test-artifacts/, named with the rig's prefix. */
  shot(page: Page, name: string, options?: { fullPage?: boolean }): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * Builds the pages when stale, starts the real server (own DATA_DIR, no tile server: the plain map, as offline; `env`
 * added) and launches chromium. Call in `beforeAll` with a long timeout (the first build and start take minutes on a
 * loaded machine).
 */
export async function startRig(name: string, opts: { env?: Record<string, string>; shots?: string } = {}): Promise<BrowserRig> {
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs'), '--web'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`web build failed:\n${built.stdout}\n${built.stderr}`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  const server = await startServer({ databaseUrl: '', env: { DATA_DIR: dataDir, MAP_TILE_URL: 'none', ...opts.env }, timeoutMs: 240_000 });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const problems: string[] = [];
  return {
    server,
    base: server.baseUrl,
    browser,
    dataDir,
    problems,
    watch(page) {
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.stack ?? e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
      });
    },
    shot: (page, shotName, options = {}) =>
      page.screenshot({ path: path.join(ARTIFACTS, `${opts.shots ?? ''}${shotName}.png`), ...options }),
    async close() {
      await browser.close();
      await stopServer(server);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Fills a page's login form (Spanish labels) and submits it. */
export async function logIn(page: Page, email: string, password = DEMO_PASSWORD): Promise<void> {
  await page.getByLabel('Correo electrónico').fill(email);
  await page.getByLabel('Contraseña').fill(password);
  await page.getByRole('button', { name: 'Iniciar sesión' }).click();
}

/**
 * An init script: the page's event streams (read with fetch) are kept on window.streams_ with an
 * AbortController each, so a test can break one (`streams_.at(-1).abort()`) and watch the page resume.
 */
export function breakableStreams(): void {
  const native = window.fetch.bind(window);
  const w = window as unknown as { streams_: AbortController[] };
  w.streams_ = [];
  window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!/\/realtime\/[a-z]+\/stream/.test(url)) return native(input, init);
    const ac = new AbortController();
    w.streams_.push(ac);
    return native(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, ac.signal]) : ac.signal });
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's audit of the page as it is (WCAG 2.x A and AA rules and best practices), its serious and critical
 * findings. axe is evaluated through the DevTools protocol, so the page's Content-Security-Policy stays as served.
 */
export async function axeSerious(page: Page, context = 'page'): Promise<AxeFinding[]> {
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: unknown,
            opts: unknown,
          ) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }>;
        };
      }
    ).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)),
    }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ ...v, help: `${context}: ${v.help}` }));
}

/** What does not fit a phone of `width` px: elements ending past the screen (outside a sideways-scrolling strip) and controls under 44 px (checkboxes count by their label). */
export function phoneFit(page: Page, width: number): Promise<{ wide: string[]; small: string[] }> {
  // The phone's width, not innerWidth: a mobile browser widens its layout viewport to what overflows.
  return page.evaluate((width) => {
    const wide = document.documentElement.scrollWidth > width + 1 ? [`page ${document.documentElement.scrollWidth}px`] : [];
    const small: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>('button, select, input, a.tab, [role="button"]')) {
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height || el.closest('[hidden], dialog:not([open])')) continue;
      const target = el instanceof HTMLInputElement && el.type === 'checkbox' ? (el.closest('label') ?? el) : el;
      const box = target.getBoundingClientRect();
      if (box.height < 44 || box.width < 44)
        small.push(
          `${el.tagName.toLowerCase()}.${el.className || el.id}: ${Math.round(box.width)}×${Math.round(box.height)} "${(el.textContent ?? '').trim().slice(0, 20)}"`,
        );
      // What a sideways-scrolling strip holds (the tabs, a wide table) may end past the screen.
      let scroller = el.parentElement;
      while (scroller && !['auto', 'scroll'].includes(getComputedStyle(scroller).overflowX)) scroller = scroller.parentElement;
      if (!scroller && r.right > width + 1)
        wide.push(`${el.tagName.toLowerCase()}.${el.className || el.id} ends at ${Math.round(r.right)}px`);
    }
    return { wide, small };
  }, width);
}
