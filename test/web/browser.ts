import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

/** Browser-test helpers shared by the pages' tests (console, tracking). */

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
