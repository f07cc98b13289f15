import { STORAGE_PURPOSES, type StoragePurpose } from '../schemas.js';
import type { Settings } from '../../../config.js';

export const MiB = 1024 * 1024;

export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif'] as const;
export const DOCUMENT_TYPES = ['application/pdf', ...IMAGE_TYPES] as const;

/** Evidence is uploaded per trip stage; the stage decides the purpose. */
export const EVIDENCE_STAGES = ['pickup', 'delivery'] as const;
export type EvidenceStage = (typeof EVIDENCE_STAGES)[number];
export const EVIDENCE_PURPOSE: Record<EvidenceStage, StoragePurpose> = { pickup: 'pickup_evidence', delivery: 'delivery_evidence' };
/** `photo` of the parcel or place, the recipient's `signature` (an image), a `document` such as a signed delivery note (an image). */
export const PROOF_TYPES = ['photo', 'signature', 'document'] as const;

export const EVIDENCE_PURPOSES: readonly StoragePurpose[] = ['pickup_evidence', 'delivery_evidence'];
export const GENERIC_PURPOSES = STORAGE_PURPOSES.filter((p) => !EVIDENCE_PURPOSES.includes(p));

export interface PurposeLimit {
  maxBytes: number;
  mimeTypes: readonly string[];
}

/** Defaults; every size is configurable with `STORAGE_MAX_BYTES_<PURPOSE>` (e.g. `STORAGE_MAX_BYTES_AVATAR=2097152`). */
export const DEFAULT_LIMITS: Record<StoragePurpose, PurposeLimit> = {
  pickup_evidence: { maxBytes: 15 * MiB, mimeTypes: IMAGE_TYPES },
  delivery_evidence: { maxBytes: 15 * MiB, mimeTypes: IMAGE_TYPES },
  avatar: { maxBytes: 5 * MiB, mimeTypes: IMAGE_TYPES },
  merchant_payment_qr: { maxBytes: 5 * MiB, mimeTypes: IMAGE_TYPES },
  coupon_asset: { maxBytes: 5 * MiB, mimeTypes: IMAGE_TYPES },
  document: { maxBytes: 20 * MiB, mimeTypes: DOCUMENT_TYPES },
  payment_proof: { maxBytes: 10 * MiB, mimeTypes: DOCUMENT_TYPES },
  other: { maxBytes: 10 * MiB, mimeTypes: DOCUMENT_TYPES },
};

/** Hard ceiling for any configured size (also the route's body limit). */
export const ABSOLUTE_MAX_BYTES = 1024 * MiB;

export const UPLOAD_TTL_SECONDS = 15 * 60;

export function limitsFromConfig(s: Settings): Record<StoragePurpose, PurposeLimit> {
  const out = {} as Record<StoragePurpose, PurposeLimit>;
  for (const p of STORAGE_PURPOSES) {
    out[p] = {
      maxBytes: s[`STORAGE_MAX_BYTES_${p.toUpperCase()}` as `STORAGE_MAX_BYTES_${Uppercase<StoragePurpose>}`],
      mimeTypes: DEFAULT_LIMITS[p].mimeTypes,
    };
  }
  return out;
}

/** HEIC and HEIF are one container family; file-type reports either for the same bytes. */
const FAMILY: Record<string, string> = { 'image/heif': 'image/heic' };
const family = (mime: string) => FAMILY[mime] ?? mime;

/** Does the sniffed type (from the binary signature) match the declared type? */
export function signatureMatches(declared: string, sniffed: string | undefined): boolean {
  return sniffed !== undefined && family(sniffed) === family(declared);
}

/** The media type of a Content-Type header, without parameters, lower case. */
export function mediaTypeOf(header: string | undefined): string | null {
  if (!header) return null;
  const t = header.split(';')[0].trim().toLowerCase();
  return t || null;
}

/** Documentation of the defaults, used in the OpenAPI descriptions. */
export function describeLimits(limits: Record<StoragePurpose, PurposeLimit> = DEFAULT_LIMITS): string {
  return STORAGE_PURPOSES.map((p) => `\`${p}\`: ${limits[p].mimeTypes.join(', ')}; max ${(limits[p].maxBytes / MiB).toFixed(0)} MiB`).join(
    '. ',
  );
}

const EXT: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/heic': 'heic',
  'image/heif': 'heif',
  'application/pdf': 'pdf',
};

/**
 * A filename safe for storage in a Content-Disposition header: no path, no control characters,
 * no quotes or backslashes, at most 150 characters; falls back to `<id>.<ext>`.
 */
export function safeFilename(input: string, fallbackId: string, mime: string): string {
  const base = input.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f"\\;]/g, '')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 150);
  return cleaned || `${fallbackId}.${EXT[mime] ?? 'bin'}`;
}

/** `attachment; filename="ascii"; filename*=UTF-8''utf8` (RFC 6266). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/[%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a single `Range: bytes=...` header. Returns null when there is no usable range (serve the
 * whole file: multi-range and malformed headers are ignored, as RFC 9110 allows), 'unsatisfiable' for 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
