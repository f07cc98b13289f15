import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { lazyModule } from '../../../platform/lazy.js';
import type { Config } from '../../../config.js';
import type { ByteRange } from './policy.js';
import type { Settings } from '../../../config.js';

export type DriverName = 'local' | 's3';

/** Where object bytes live. Keys are object ids (never user-supplied names). */
export interface StorageDriver {
  readonly name: DriverName;
  /**
   * Stores `body` under `key`, exactly `size` bytes. Resolves once the object is complete and
   * visible; on any error (including an error of `body`) nothing is left under `key` and it rejects.
   */
  put(key: string, body: Readable, size: number, mimeType: string): Promise<void>;
  /** Streams the object, or the inclusive byte range. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the object and any partial upload of it; missing is fine. */
  delete(key: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9_-]{1,64}$/;
function checkKey(key: string): string {
  // Keys are ids we generate; refusing anything else makes path traversal impossible by construction.
  if (!KEY.test(key)) throw new Error(`invalid storage key: ${key}`);
  return key;
}

const ignoreMissing = (err: NodeJS.ErrnoException) => {
  if (err.code !== 'ENOENT') throw err;
};

/** Files under `<dataDir>/objects/<id>`; an upload is written to `<id>.partial` and renamed when complete. */
export function createLocalDriver(dir: string): StorageDriver {
  let ready: Promise<unknown> | null = null;
  const ensureDir = () => (ready ??= mkdir(dir, { recursive: true, mode: 0o700 }));
  const fileOf = (key: string) => path.join(dir, checkKey(key));
  return {
    name: 'local',
    async put(key, body) {
      await ensureDir();
      const final = fileOf(key);
      const partial = `${final}.partial`;
      // flush: fsync before close, so a completed upload survives a crash.
      const out = createWriteStream(partial, { flags: 'w', mode: 0o600, flush: true });
      try {
        await pipeline(body, out);
        await rename(partial, final);
      } catch (err) {
        out.destroy();
        await finished(out).catch(() => undefined);
        await unlink(partial).catch(ignoreMissing);
        throw err;
      }
    },
    async get(key, range) {
      const file = fileOf(key);
      const stream = createReadStream(file, range ? { start: range.start, end: range.end } : {});
      // Surface a missing file as a rejected promise rather than a stream error mid-response.
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
      return stream;
    },
    async delete(key) {
      const file = fileOf(key);
      await unlink(file).catch(ignoreMissing);
      await unlink(`${file}.partial`).catch(ignoreMissing);
    },
  };
}

export interface S3Settings {
  bucket: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  keyPrefix: string;
}

/** @aws-sdk/client-s3 is loaded by the first S3 request, not at start (platform/lazy.ts). */
const loadS3Sdk = lazyModule('@aws-sdk/client-s3', () => import('@aws-sdk/client-s3'));

/** Any S3-compatible store (AWS S3, MinIO, R2...): for deployments with several API instances. */
export function createS3Driver(s: S3Settings, client?: S3Client): StorageDriver {
  let made: Promise<S3Client> | undefined;
  const clientOf = async (): Promise<S3Client> =>
    client ??
    (made ??= loadS3Sdk().then(
      ({ S3Client }) =>
        new S3Client({
          region: s.region,
          endpoint: s.endpoint,
          forcePathStyle: s.forcePathStyle,
          credentials: s.accessKeyId && s.secretAccessKey ? { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } : undefined,
          // Plain Content-Length uploads; aws-chunked trailing checksums are not supported by every S3-compatible store.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
    ));
  const keyOf = (key: string) => `${s.keyPrefix}${checkKey(key)}`;
  const remove = async (key: string) => {
    const [s3, { DeleteObjectCommand }] = await Promise.all([clientOf(), loadS3Sdk()]);
    await s3.send(new DeleteObjectCommand({ Bucket: s.bucket, Key: keyOf(key) }));
  };
  return {
    name: 's3',
    async put(key, body, size, mimeType) {
      // The SDK pipes the body into the request and does not see its errors: abort the request on one.
      const abort = new AbortController();
      let bodyError: unknown = null;
      const onError = (err: unknown) => {
        bodyError = err;
        abort.abort();
      };
      body.once('error', onError);
      try {
        // Loaded after the error listener is on: an error of `body` while the SDK loads is caught too.
        const [s3, { PutObjectCommand }] = await Promise.all([clientOf(), loadS3Sdk()]);
        await s3.send(new PutObjectCommand({ Bucket: s.bucket, Key: keyOf(key), Body: body, ContentLength: size, ContentType: mimeType }), {
          abortSignal: abort.signal,
        });
      } catch (err) {
        // A PUT either stores the whole object or nothing; delete in case the store committed before the error.
        await remove(key).catch(() => undefined);
        throw bodyError ?? err;
      } finally {
        body.off('error', onError);
      }
      if (bodyError) {
        await remove(key).catch(() => undefined);
        throw bodyError;
      }
    },
    async get(key, range) {
      const [s3, { GetObjectCommand }] = await Promise.all([clientOf(), loadS3Sdk()]);
      const res = await s3.send(
        new GetObjectCommand({ Bucket: s.bucket, Key: keyOf(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      if (!res.Body) throw new Error('S3 returned no body');
      return res.Body as Readable;
    },
    delete: remove,
  };
}

export function s3SettingsFromConfig(raw: Settings): S3Settings {
  const bucket = raw.S3_BUCKET;
  if (!bucket) throw new Error('config: S3_BUCKET is required when STORAGE_DRIVER=s3');
  return {
    bucket,
    region: raw.S3_REGION,
    endpoint: raw.S3_ENDPOINT || undefined,
    forcePathStyle: raw.S3_FORCE_PATH_STYLE,
    accessKeyId: raw.S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: raw.S3_SECRET_ACCESS_KEY || undefined,
    keyPrefix: raw.S3_KEY_PREFIX ?? 'objects/',
  };
}

/**
 * The drivers of this instance: `local` always (reads of objects stored before a switch keep working),
 * `s3` when `STORAGE_DRIVER=s3`. New uploads go to `primary`.
 */
export function driversFromConfig(config: Config): { primary: StorageDriver; byName: Partial<Record<DriverName, StorageDriver>> } {
  const local = createLocalDriver(path.join(config.dataDir, 'objects'));
  const which = config.settings.STORAGE_DRIVER;
  if (which === 'local') {
    // Files on one instance's disk are missing on the others: several instances need a shared store.
    if (config.settings.MULTI_INSTANCE) {
      throw new Error("config: STORAGE_DRIVER=local keeps objects on this instance's disk; with MULTI_INSTANCE=true use STORAGE_DRIVER=s3");
    }
    return { primary: local, byName: { local } };
  }
  const s3 = createS3Driver(s3SettingsFromConfig(config.settings));
  return { primary: s3, byName: { local, s3 } };
}
