import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyCorsOptions } from '@fastify/cors';
import helmet, { type HelmetOptions } from 'helmet';
import { TITLES } from './errors.js';
import type { Settings } from '../config.js';

/**
 * The HTTP edge: server timeouts, framework-level client errors as problem+json, CORS and the
 * Content-Security-Policy of the docs page. Settings come from the environment (README, .env.example).
 */
export interface EdgeSettings {
  /** Whole request (headers and body) must arrive within this (Node `requestTimeout`); 408 otherwise. */
  requestTimeoutMs: number;
  /** Headers must arrive within this (Node `headersTimeout`); 408 otherwise. */
  headersTimeoutMs: number;
  /** Idle keep-alive connections are closed after this (Node `keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic either way for this long is closed (Fastify `connectionTimeout`); SSE heartbeats keep streams busy. */
  idleTimeoutMs: number;
  /** How often Node checks the two timeouts above (its default, 30 s, would let a slow client linger that much longer). */
  timeoutCheckMs: number;
  /** Largest request head (request line + headers) in bytes; beyond it 431. */
  maxHeaderBytes: number;
}

export function edgeSettings(raw: Settings): EdgeSettings {
  const s: EdgeSettings = {
    requestTimeoutMs: raw.HTTP_REQUEST_TIMEOUT_MS,
    headersTimeoutMs: raw.HTTP_HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: raw.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    idleTimeoutMs: raw.HTTP_IDLE_TIMEOUT_MS,
    timeoutCheckMs: raw.HTTP_TIMEOUT_CHECK_MS,
    maxHeaderBytes: raw.HTTP_MAX_HEADER_BYTES,
  };
  s.headersTimeoutMs = Math.min(s.headersTimeoutMs, s.requestTimeoutMs);
  return s;
}

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT', 'The request (headers and body) did not arrive in time'],
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE', 'The request headers are too large'],
  HPE_URI_TOO_LONG: [414, 'URI_TOO_LONG', 'The request line is too long'],
};

/** Errors Node's HTTP parser raises before Fastify sees a request: answered as problem+json, then the socket closes. */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, detail] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'MALFORMED_REQUEST', 'The request could not be parsed as HTTP/1.1'];
  const body = JSON.stringify({
    type: `https://errors.delivery.example/${code.toLowerCase().replace(/_/g, '-')}`,
    title: TITLES[status] ?? http.STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    code,
    request_id: null,
  });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Spread into the Fastify constructor options. */
export function serverOptions(s: EdgeSettings) {
  return {
    connectionTimeout: s.idleTimeoutMs,
    requestTimeout: s.requestTimeoutMs,
    keepAliveTimeout: s.keepAliveTimeoutMs,
    http: { headersTimeout: s.headersTimeoutMs, connectionsCheckingInterval: s.timeoutCheckMs, maxHeaderSize: s.maxHeaderBytes },
    clientErrorHandler,
  };
}

/** Every method the API uses, the request headers clients send, and the response headers scripts may read. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'Last-Event-ID',
  'If-None-Match',
  'X-Upload-Token',
  'X-Request-Id',
  'Range',
];
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Retry-After',
  'Idempotent-Replayed',
  'X-Request-Id',
  'Content-Disposition',
  'Content-Range',
  'Accept-Ranges',
  'Last-Modified',
];

/** CORS from the configured allowlist (`CORS_ORIGINS`); no origin is allowed when it is empty. No cookies: bearer tokens only. */
export function corsOptions(origins: string[]): FastifyCorsOptions {
  return {
    origin: origins.length ? origins : false,
    credentials: false,
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: true,
  };
}

/**
 * Content-Security-Policy of the Swagger UI page (/docs): its own scripts and styles only (Swagger UI
 * sets a few inline styles and loads its images as data: URIs), the API itself for the OpenAPI document
 * and "Try it out", and no framing.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The security headers of every response (helmet's, without a Content-Security-Policy: the pages that need one set
 * their own), worked out once by helmet itself at start and then set as one object per request, instead of
 * building helmet's middleware for each request as @fastify/helmet did (about 3 % of a `GET /me`).
 */
export function securityHeaders(
  options: HelmetOptions = { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } },
): Record<string, string> {
  const headers: Record<string, string> = {};
  let ran = false;
  const res = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: () => undefined, // X-Powered-By, which Node never sets
  };
  helmet(options)({} as http.IncomingMessage, res as unknown as http.ServerResponse, () => void (ran = true));
  if (!ran) throw new Error('helmet did not complete synchronously');
  return headers;
}
