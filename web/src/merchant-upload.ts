import { api, ok } from './api';
import { resizeImage } from './pwa';

/**
 * Photos for the merchant's records: checked for type, resized in the browser (pwa.ts resizeImage: longest side at
 * most 1024 px, JPEG), then stored through an upload slot (POST /storage/generic/uploads, PUT the bytes). Returns the object id.
 */

export const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp'];
const MAX_SIDE = 1024;

export class BadPhoto extends Error {}

/** Checks the type, then resizes with the shared resizeImage (pwa.ts); a file that does not decode is no photo either. */
export async function resizePhoto(file: File): Promise<Blob> {
  if (!PHOTO_TYPES.includes(file.type)) throw new BadPhoto(file.type || 'unknown');
  try {
    return await resizeImage(file, MAX_SIDE, 0.85);
  } catch {
    throw new BadPhoto('unreadable'); // named .png but not an image
  }
}

export async function uploadPhoto(blob: Blob, purpose: 'other' | 'merchant_payment_qr', name = 'photo.jpg'): Promise<string> {
  const slot = await ok(
    api.POST('/api/v1/storage/generic/uploads', {
      body: { purpose, mime_type: blob.type as 'image/jpeg', size_bytes: blob.size, filename: name },
    }),
  );
  const stored = await ok(
    api.PUT('/api/v1/storage/uploads/{upload_id}', {
      params: { path: { upload_id: slot.upload_id } },
      body: blob as never,
      bodySerializer: (b: unknown) => b as Blob,
      headers: { 'content-type': blob.type, 'x-upload-token': slot.upload_token },
    }),
  );
  return (stored as { id: string }).id;
}

/** A stored object as a data: URL (the page's CSP allows data: images; the download needs the session). */
export async function objectUrl(id: string): Promise<string> {
  const r = await api.GET('/api/v1/storage/objects/{object_id}', { params: { path: { object_id: id } }, parseAs: 'blob' });
  if (!r.response.ok || !r.data) throw new Error(`HTTP ${r.response.status}`);
  const blob = r.data as Blob;
  return new Promise((resolve, reject) => {
    const fr = new FileReader();
    fr.onload = () => resolve(String(fr.result));
    fr.onerror = () => reject(fr.error);
    fr.readAsDataURL(blob);
  });
}
