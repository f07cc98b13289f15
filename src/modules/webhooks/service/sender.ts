import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Config } from '../../../config.js';

/** Where webhooks may go: https only outside development, and no private or loopback address unless allowed. */
export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/** Read on every use from the configuration: `WEBHOOK_ALLOW_HTTP` (default: only in development), `WEBHOOK_ALLOW_PRIVATE_TARGETS` (default off). */
export function targetPolicy(config: Pick<Config, 'env' | 'settings'>): TargetPolicy {
  return {
    allowHttp: config.env === 'development' || config.settings.WEBHOOK_ALLOW_HTTP,
    allowPrivate: config.settings.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  };
}

/** Addresses that are not the public internet: loopback, private, link-local, CGNAT, multicast, reserved, IPv6 ULA... */
const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(net, bits, 'ipv6');
}

/** True when the address is not on the public internet (IPv4-mapped IPv6 addresses are judged as IPv4). */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family === 6) return NON_PUBLIC.check(address, 'ipv6');
  return true;
}

export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/**
 * Checks a subscription URL against the policy without resolving it (resolution happens on every send, where
 * the address actually connected to is checked): absolute http(s), no credentials, https unless allowed,
 * and a literal address or `localhost` must be public unless private targets are allowed.
 */
export function checkTargetUrl(raw: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'only http(s) URLs are accepted';
  if (url.protocol === 'http:' && !policy.allowHttp) return 'the URL must use https';
  if (url.username || url.password) return 'the URL must not carry credentials';
  if (url.hash) return 'the URL must not have a fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate) {
    if (isIP(host) && isNonPublicAddress(host)) return 'private, loopback and reserved addresses are refused';
    if (/^localhost$|\.localhost$|\.local$|\.internal$/i.test(host)) return 'private, loopback and reserved addresses are refused';
  }
  return null;
}

/** A DNS lookup that refuses non-public answers: the connection goes to the address checked here, not to a second resolution. */
function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const allowed = policy.allowPrivate ? list : list.filter((a) => !isNonPublicAddress(a.address));
      if (allowed.length === 0) {
        return callback(
          new TargetRefused(`${hostname} resolves only to private, loopback or reserved addresses`) as NodeJS.ErrnoException,
          '',
          0,
        );
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0].address, allowed[0].family);
    });
  };
}

/**
 * Keep-alive agents, one per scheme and policy: a socket is opened through the guarded lookup (so its address was
 * checked) and then reused for the next deliveries to the same host.
 */
const agents = new Map<string, http.Agent>();
function agentFor(protocol: string, policy: TargetPolicy): http.Agent {
  const key = `${protocol}${policy.allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const opts = { keepAlive: true, maxSockets: 32, maxFreeSockets: 8, timeout: 30_000, lookup: guardedLookup(policy) };
    agent = protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the kept-alive sockets (shutdown). */
export function closeAgents(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  policy: TargetPolicy;
  /** Bytes of the response body kept for the delivery log. */
  excerptBytes?: number;
}

export interface SendResult {
  /** HTTP status, or null when no response came (network error, timeout, refused target). */
  statusCode: number | null;
  headers: http.IncomingHttpHeaders;
  excerpt: string | null;
  error: string | null;
  /** The target is refused by the policy (not retried). */
  refused: boolean;
}

export type WebhookSender = (req: SendRequest) => Promise<SendResult>;

/**
 * POSTs one webhook with node:http(s): the whole exchange (connect, response, excerpt) is bounded by
 * `timeoutMs`; redirects are not followed; an IP literal is checked here, a host name in the lookup above.
 */
export const httpSender: WebhookSender = (req) =>
  new Promise((resolve) => {
    const url = new URL(req.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const problem = checkTargetUrl(req.url, req.policy);
    if (problem) return resolve({ statusCode: null, headers: {}, excerpt: null, error: `target refused: ${problem}`, refused: true });
    if (!req.policy.allowPrivate && isIP(host) && isNonPublicAddress(host)) {
      return resolve({ statusCode: null, headers: {}, excerpt: null, error: 'target refused: non-public address', refused: true });
    }
    const lib = url.protocol === 'https:' ? https : http;
    let settled = false;
    const done = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const out = lib.request(
      url,
      {
        method: 'POST',
        headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
        agent: agentFor(url.protocol, req.policy),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const max = req.excerptBytes ?? 1024;
        const finish = () => {
          done({
            statusCode: res.statusCode ?? null,
            headers: res.headers,
            excerpt: Buffer.concat(chunks).toString('utf8').slice(0, max),
            error: null,
            refused: false,
          });
          res.destroy();
        };
        res.on('data', (c: Buffer) => {
          if (size < max) chunks.push(c.subarray(0, max - size));
          size += c.length;
          if (size >= max) finish();
        });
        res.on('end', finish);
        res.on('error', finish);
      },
    );
    const timer = setTimeout(() => {
      out.destroy(new Error(`timed out after ${req.timeoutMs} ms`));
    }, req.timeoutMs);
    out.on('error', (err) => {
      done({ statusCode: null, headers: {}, excerpt: null, error: err.message.slice(0, 500), refused: err instanceof TargetRefused });
    });
    out.end(req.body);
  });
