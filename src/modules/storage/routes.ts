import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { actorOf } from '../../platform/auth.js';
import { AppError } from '../../platform/errors.js';
import { Id, Literals, ShortText, Strict } from '../../platform/schemas.js';
import type { Api } from '../../platform/context.js';
import {
  ABSOLUTE_MAX_BYTES,
  DOCUMENT_TYPES,
  EVIDENCE_STAGES,
  GENERIC_PURPOSES,
  PROOF_TYPES,
  contentDisposition,
  describeLimits,
  mediaTypeOf,
  parseRange,
} from './service/policy.js';
import { downloadUrl, type EvidenceSlotInput, type GenericSlotInput, type StorageService, type StoredObject } from './service/objects.js';
import { ObjectOut, Slot } from './schemas.js';

const MimeType = Literals(DOCUMENT_TYPES, 'declared media type; the binary must match it');
const SizeBytes = Type.Integer({
  minimum: 1,
  maximum: ABSOLUTE_MAX_BYTES,
  description: `declared size; the PUT must carry exactly this many bytes. At most the purpose's limit (STORAGE_MAX_BYTES_<PURPOSE>; defaults: ${describeLimits()}): beyond it 413 UPLOAD_TOO_LARGE`,
});
const Filename = ShortText(255);

const objectOut = (o: StoredObject) => ({ ...o, download_url: downloadUrl(o.id) });

const LIMITS_DOC = `Limits per purpose (defaults; sizes configurable with STORAGE_MAX_BYTES_<PURPOSE>): ${describeLimits()}.`;

const READERS_DOC =
  "Who may read: the uploader; administrators and dispatch of the organization; for trip evidence the trip's merchant and customer; " +
  'sub-administrators only for objects whose territory (taken from the trip) is one of theirs. Everyone else, and any other organization, gets 404.';

function setObjectHeaders(reply: FastifyReply, o: StoredObject) {
  reply
    .header('content-type', o.mime_type)
    .header('etag', `"${o.sha256}"`)
    .header('cache-control', 'private')
    .header('x-content-type-options', 'nosniff')
    .header('content-disposition', contentDisposition(o.filename))
    .header('accept-ranges', 'bytes')
    .header('last-modified', new Date(o.created_at).toUTCString());
}

function notModified(ifNoneMatch: string | undefined, sha256: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === `"${sha256}"`;
  });
}

export async function storageRoutes(app: Api, svc: StorageService) {
  app.post(
    '/storage/evidence/uploads',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'repartidor'] } },
      schema: {
        operationId: 'createEvidenceUpload',
        tags: ['storage'],
        summary: 'Request an upload slot for trip evidence (step 1 of 4)',
        description:
          'Every slot counts against the organization storage quota (`STORAGE_QUOTA_BYTES_PER_ORGANIZATION`, stored objects plus open slots): beyond it 507 STORAGE_QUOTA_EXCEEDED with `quota_bytes`, `used_bytes`, `requested_bytes`. ' +
          "Only the trip's assigned driver, dispatch or an administrator may open one (else 403 NOT_TRIP_DRIVER; unknown trip 404; " +
          '422 TRIPS_UNAVAILABLE when the trips service is not running). `stage`: `pickup` (purpose `pickup_evidence`) or `delivery` ' +
          '(`delivery_evidence`). `proof_type`: `photo`, `signature` (image of the signature) or `document` (image of a signed note). ' +
          'Evidence is an image: JPEG, PNG, WebP or HEIC/HEIF, at most 15 MiB by default. A type not allowed is 415 MEDIA_TYPE_NOT_ALLOWED, ' +
          'a size over the limit 413 UPLOAD_TOO_LARGE. The slot and its token expire after 15 minutes. ' +
          LIMITS_DOC,
        body: Strict({
          trip_id: Id,
          stage: Literals(EVIDENCE_STAGES),
          proof_type: Literals(PROOF_TYPES),
          mime_type: MimeType,
          size_bytes: SizeBytes,
          filename: Filename,
        }),
        response: { 201: Slot },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.createEvidenceSlot(actorOf(req), req.body as EvidenceSlotInput)),
  );

  app.post(
    '/storage/generic/uploads',
    {
      schema: {
        operationId: 'createGenericUpload',
        tags: ['storage'],
        summary: 'Request an upload slot for a non-evidence purpose',
        description:
          'Every slot counts against the organization storage quota (`STORAGE_QUOTA_BYTES_PER_ORGANIZATION`, stored objects plus open slots): beyond it 507 STORAGE_QUOTA_EXCEEDED with `quota_bytes`, `used_bytes`, `requested_bytes`. ' +
          'Purposes: `document`, `avatar`, `merchant_payment_qr`, `payment_proof`, `coupon_asset`, `other` (evidence uses POST /storage/evidence/uploads). ' +
          'Images (JPEG, PNG, WebP, HEIC/HEIF) for avatars, payment QR codes and coupon assets; PDF and images for documents, payment proofs and other. ' +
          '`owner_type` + `owner_id` optionally record what the file is for (informational; links are checked where they are made). ' +
          'The slot and its token expire after 15 minutes. ' +
          LIMITS_DOC,
        body: Strict({
          purpose: Literals(GENERIC_PURPOSES),
          mime_type: MimeType,
          size_bytes: SizeBytes,
          filename: Filename,
          owner_type: Type.Optional(
            Type.String({ pattern: '^[a-z][a-z_]{1,39}$', description: 'e.g. merchant, coupon, payment_review, user' }),
          ),
          owner_id: Type.Optional(Id),
        }),
        response: { 201: Slot },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.createGenericSlot(actorOf(req), req.body as GenericSlotInput)),
  );

  // The PUT lives in its own scope: its body is the raw request stream, no parser buffers it, whatever its Content-Type.
  await app.register(async (scope) => {
    const raw = scope.withTypeProvider<TypeBoxTypeProvider>();
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    raw.put(
      '/storage/uploads/:upload_id',
      {
        bodyLimit: ABSOLUTE_MAX_BYTES,
        schema: {
          operationId: 'uploadObject',
          tags: ['storage'],
          summary: 'Upload the binary of a slot (step 2 of 4)',
          description:
            'Headers: `Authorization` (the user who opened the slot), `X-Upload-Token`, `Content-Type` (exactly the declared type), `Content-Length`. ' +
            'The body is streamed to the store, never held in memory. Refusals: wrong or missing token 403 UPLOAD_TOKEN_INVALID; slot of someone else 404; ' +
            'slot already used 409 UPLOAD_ALREADY_COMPLETED; another PUT running 409 UPLOAD_IN_PROGRESS (of two concurrent PUTs exactly one wins); ' +
            'expired 410 UPLOAD_EXPIRED; Content-Type different from the declared one 415 CONTENT_TYPE_MISMATCH; binary signature not matching ' +
            '(e.g. a PE or HTML file declared image/jpeg) 415 SIGNATURE_MISMATCH; more bytes than declared 413 UPLOAD_TOO_LARGE (the read stops at the ' +
            'first byte past it); fewer 400 SIZE_MISMATCH. On a refusal nothing is stored and the slot stays usable until it expires. ' +
            'On success (201) the object is recorded with its SHA-256 and the slot is consumed.',
          params: Strict({ upload_id: Id }),
          // Documentation only: an untyped schema accepts the raw stream the parser hands over.
          consumes: [...DOCUMENT_TYPES],
          body: Type.Unsafe<unknown>({ format: 'binary', description: 'the raw bytes of the file (not multipart)' }),
          response: { 201: ObjectOut },
        },
      },
      async (req, reply) => {
        const actor = actorOf(req);
        const token = req.headers['x-upload-token'];
        const length = req.headers['content-length'];
        const body = req.body as Readable | undefined;
        if (!body || typeof (body as Readable).pipe !== 'function') throw new AppError(400, 'EMPTY_UPLOAD', 'The request has no body');
        try {
          const o = await svc.upload(actor, {
            uploadId: req.params.upload_id,
            token: typeof token === 'string' ? token : undefined,
            mediaType: mediaTypeOf(req.headers['content-type']),
            contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : null,
            body,
          });
          return reply.code(201).send(objectOut(o));
        } catch (err) {
          // The rest of an unread body is not wanted: close the connection after the refusal.
          if (!body.readableEnded) reply.header('connection', 'close');
          throw err;
        }
      },
    );
  });

  const ObjectParams = Strict({ object_id: Id });
  // Content-Type is the object's own media type; each allowed type is listed for the OpenAPI document.
  const Binary = (description: string) => ({
    description,
    content: Object.fromEntries(DOCUMENT_TYPES.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])),
  });

  app.get(
    '/storage/objects/:object_id',
    {
      exposeHeadRoute: false,
      schema: {
        operationId: 'downloadObject',
        tags: ['storage'],
        summary: 'Download a stored object (step 4 of 4)',
        description:
          'A recorded object whose content is missing from the store answers 404 OBJECT_CONTENT_MISSING. ' +
          'Streams the content with Content-Type, Content-Length, ETag (the quoted SHA-256), Cache-Control: private, X-Content-Type-Options: nosniff ' +
          'and Content-Disposition: attachment. `Range: bytes=a-b` (single range) gives 206 with Content-Range; a range starting past the end 416; ' +
          'multi-range or malformed ranges are ignored (200). `If-None-Match` with the ETag gives 304. `HEAD` on the same path answers the same ' +
          'headers without the content. ' +
          READERS_DOC,
        params: ObjectParams,
        response: {
          200: Binary('the stored bytes'),
          206: Binary('the requested range'),
          304: Type.Null({ description: 'not modified (If-None-Match)' }),
        },
      },
    },
    async (req, typedReply) => {
      // Binary responses: the reply is not serialized against a JSON schema.
      const reply = typedReply as FastifyReply;
      const o = await svc.objectForReader(actorOf(req), req.params.object_id);
      setObjectHeaders(reply, o);
      if (notModified(req.headers['if-none-match'], o.sha256)) return reply.code(304).send();
      const range = parseRange(req.headers.range, o.size_bytes);
      if (range === 'unsatisfiable') {
        reply.header('content-range', `bytes */${o.size_bytes}`);
        throw new AppError(416, 'RANGE_NOT_SATISFIABLE', `The object has ${o.size_bytes} bytes`);
      }
      const stream = await svc.openContent(o, range ?? undefined);
      if (range) {
        reply
          .code(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${o.size_bytes}`)
          .header('content-length', String(range.end - range.start + 1));
      } else {
        reply.header('content-length', String(o.size_bytes));
      }
      return reply.send(stream);
    },
  );

  app.head(
    '/storage/objects/:object_id',
    {
      // @fastify/swagger leaves HEAD routes out of the document unless asked: this one is a route of its own.
      config: { swagger: { exposeHeadRoute: true } },
      schema: {
        operationId: 'headObject',
        tags: ['storage'],
        summary: 'Headers of a stored object, without the content',
        description: 'Same headers and authorization as the GET (Content-Length is the full size). ' + READERS_DOC,
        params: ObjectParams,
        response: { 200: Type.Null({ description: 'no body' }) },
      },
    },
    async (req, typedReply) => {
      const reply = typedReply as FastifyReply;
      const o = await svc.objectForReader(actorOf(req), req.params.object_id);
      setObjectHeaders(reply, o);
      reply.header('content-length', String(o.size_bytes));
      return reply.send();
    },
  );
}
