import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../../../platform/errors.js';
import { signatureMatches } from './policy.js';

/** Bytes buffered for the signature check (file-type reads at most this much for the formats we accept). */
export const SNIFF_BYTES = 4100;

/**
 * Pass-through that checks an upload while it streams: at most `size` bytes (413 on the first byte
 * past it), exactly `size` in the end (400), a binary signature matching `mimeType` (415), and the
 * SHA-256 of the content. Only the first ~4 KiB are held back until the signature is known.
 */
export class UploadVerifier extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private head: Buffer[] = [];
  private headLength = 0;
  private sniffed = false;
  /** The first refusal, kept so the caller reports it rather than a downstream error it caused. */
  failure: AppError | null = null;

  constructor(
    private readonly size: number,
    private readonly mimeType: string,
  ) {
    super();
  }

  get received(): number {
    return this.bytes;
  }

  digest(): string {
    return this.hash.digest('hex');
  }

  private fail(err: AppError): AppError {
    this.failure ??= err;
    return err;
  }

  private async checkSignature(): Promise<Buffer> {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.sniffed = true;
    const type = await fileTypeFromBuffer(head.subarray(0, SNIFF_BYTES));
    if (!signatureMatches(this.mimeType, type?.mime)) {
      throw this.fail(
        new AppError(
          415,
          'SIGNATURE_MISMATCH',
          `The content is not ${this.mimeType} (its binary signature says ${type?.mime ?? 'unknown'})`,
          undefined,
          {
            detected_mime_type: type?.mime ?? null,
          },
        ),
      );
    }
    return head;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.size) {
      cb(
        this.fail(
          new AppError(413, 'UPLOAD_TOO_LARGE', `The upload is larger than the declared size of ${this.size} bytes`, undefined, {
            max_bytes: this.size,
          }),
        ),
      );
      return;
    }
    this.hash.update(chunk);
    if (this.sniffed) {
      cb(null, chunk);
      return;
    }
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SNIFF_BYTES) {
      cb();
      return;
    }
    this.checkSignature().then((head) => cb(null, head), cb);
  }

  override _flush(cb: TransformCallback): void {
    if (this.bytes !== this.size) {
      cb(
        this.fail(
          new AppError(400, 'SIZE_MISMATCH', `Received ${this.bytes} bytes, declared ${this.size}`, undefined, {
            received_bytes: this.bytes,
            declared_bytes: this.size,
          }),
        ),
      );
      return;
    }
    if (this.sniffed) {
      cb();
      return;
    }
    this.checkSignature().then((head) => cb(null, head), cb);
  }
}
