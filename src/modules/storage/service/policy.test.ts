import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  MiB,
  contentDisposition,
  limitsFromConfig,
  mediaTypeOf,
  parseRange,
  safeFilename,
  signatureMatches,
} from './policy.js';
import { readSettings } from '../../../config.js';

describe('parseRange', () => {
  it.each([
    [undefined, null],
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=10-', { start: 10, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=-1000', { start: 0, end: 99 }],
    ['bytes=90-1000', { start: 90, end: 99 }],
    ['bytes=99-99', { start: 99, end: 99 }],
    ['bytes=100-', 'unsatisfiable'],
    ['bytes=-0', 'unsatisfiable'],
    ['bytes=5-3', null],
    ['bytes=0-1,4-5', null],
    ['bytes=-', null],
    ['items=0-1', null],
  ])('%s on 100 bytes -> %j', (header, expected) => {
    expect(parseRange(header, 100)).toEqual(expected);
  });
});

describe('filenames', () => {
  it.each([
    ['photo.jpg', 'photo.jpg'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\scan.pdf', 'scan.pdf'],
    ['a"b;c\r\nd.png', 'abcd.png'],
    ['...hidden', 'hidden'],
    ['', 'ID.png'],
    ['///', 'ID.png'],
  ])('%j -> %j', (input, expected) => {
    expect(safeFilename(input, 'ID', 'image/png')).toBe(expected);
  });

  it('Content-Disposition is an attachment with an ASCII fallback and an RFC 5987 UTF-8 name', () => {
    expect(contentDisposition('recibo café.pdf')).toBe(`attachment; filename="recibo caf_.pdf"; filename*=UTF-8''recibo%20caf%C3%A9.pdf`);
  });
});

describe('limits', () => {
  it('documents the defaults: images for evidence and avatars, PDF and images for documents and payment proofs', () => {
    expect(DEFAULT_LIMITS.pickup_evidence.mimeTypes).not.toContain('application/pdf');
    expect(DEFAULT_LIMITS.avatar.mimeTypes).toEqual(['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif']);
    expect(DEFAULT_LIMITS.document.mimeTypes).toContain('application/pdf');
    expect(DEFAULT_LIMITS.payment_proof.mimeTypes).toContain('application/pdf');
  });

  it('reads STORAGE_MAX_BYTES_<PURPOSE> and refuses nonsense', () => {
    const l = limitsFromConfig(readSettings({ STORAGE_MAX_BYTES_AVATAR: '1024', STORAGE_MAX_BYTES_OTHER: '' }));
    expect(l.avatar.maxBytes).toBe(1024);
    expect(l.other.maxBytes).toBe(10 * MiB);
    expect(() => readSettings({ STORAGE_MAX_BYTES_DOCUMENT: '-1' })).toThrow(/STORAGE_MAX_BYTES_DOCUMENT/);
    expect(() => readSettings({ STORAGE_MAX_BYTES_DOCUMENT: '1.5' })).toThrow();
  });

  it('matches signatures, treating HEIC and HEIF as one family', () => {
    expect(signatureMatches('image/jpeg', 'image/jpeg')).toBe(true);
    expect(signatureMatches('image/heic', 'image/heif')).toBe(true);
    expect(signatureMatches('image/jpeg', 'application/x-msdownload')).toBe(false);
    expect(signatureMatches('image/jpeg', undefined)).toBe(false);
  });

  it('reads the media type of a Content-Type header', () => {
    expect(mediaTypeOf('Image/PNG; charset=binary')).toBe('image/png');
    expect(mediaTypeOf(undefined)).toBeNull();
  });
});
