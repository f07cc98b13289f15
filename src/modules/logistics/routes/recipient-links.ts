import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api, AppContext } from '../../../platform/context.js';
import { AppError } from '../../../platform/errors.js';
import { countRequest } from '../../../platform/rate-limit.js';
import { Id, Phone, Strict } from '../../../platform/schemas.js';
import { LINK_HOURS_AFTER_END } from '../service/recipient-links.js';
import { LinkOut, PublicTracking } from '../schemas.js';
import type { LogisticsService } from '../service/logistics.js';

const WHO = ['administrator', 'dispatch', 'subadmin', 'comercio'] as const;
/** Requests per link and minute: a page polling every few seconds, on a few phones at once, stays far below. */
export const PUBLIC_TRACKING_PER_MINUTE = 120;
/** Forged or garbled links per client address and minute (shared with the recipient's preference changes). */
export const PUBLIC_TRACKING_UNKNOWN_PER_MINUTE = 30;
const TripParams = Strict({ id: Id });

/**
 * Recipient tracking links: staff and the trip's merchant see, reissue and revoke the link of a trip whose
 * recipient has no account; the recipient opens it without logging in.
 */
export function recipientLinkRoutes(app: Api, ctx: AppContext, svc: LogisticsService) {
  const trips = svc.requests.trips;

  app.get(
    '/trips/:id/recipient-link',
    {
      config: { auth: { roles: [...WHO], permission: 'tracking' } },
      schema: {
        operationId: 'getTripRecipientLink',
        tags: ['trips'],
        summary: "The live tracking link of a trip's recipient (trips without a customer account); 404 when there is none",
        description: `expires_at is null while the trip runs and ${LINK_HOURS_AFTER_END} hours after it ended; the link answers while the trip is visible in the app.`,
        params: TripParams,
        response: { 200: LinkOut },
      },
    },
    async (req) => {
      return trips.recipientLink(actorOf(req), req.params.id);
    },
  );

  app.post(
    '/trips/:id/recipient-link',
    {
      config: { auth: { roles: [...WHO], permission: 'tracking' } },
      schema: {
        operationId: 'issueTripRecipientLink',
        tags: ['trips'],
        summary:
          'Get or create the recipient tracking link; reissue it only when asked (the link already sent then stops working); audited',
        description:
          'Without `reissue` (or with `reissue: false`) an existing live link is **kept and returned with 200**: the link the recipient already ' +
          'has goes on working (a different `recipient_phone` updates the phone his messages go to; the URL does not change). With no live link ' +
          'a new one is created (**201**). With `reissue: true` the live link is revoked, so the address already sent answers 404 from then on, ' +
          'and a new one is created (**201**); a client should ask the user before sending it. ' +
          '422 RECIPIENT_HAS_ACCOUNT when the trip has a customer (he follows it in the app); 409 INVALID_STATE once the trip ended.',
        params: TripParams,
        body: Strict({
          recipient_phone: Type.Optional(Phone),
          reissue: Type.Optional(
            Type.Boolean({
              description: 'default false; true: revoke the live link (the one already sent stops working) and issue a new one',
            }),
          ),
        }),
        response: {
          200: LinkOut, // the existing live link, kept (not reissued)
          201: LinkOut, // a new link: there was none, or reissue was asked
        },
      },
    },
    async (req, reply) => {
      const { created, link } = await trips.issueRecipientLink(
        actorOf(req),
        req.params.id,
        req.body?.recipient_phone ?? null,
        req.body?.reissue === true,
      );
      return reply.code(created ? 201 : 200).send(link);
    },
  );

  app.delete(
    '/trips/:id/recipient-link',
    {
      config: { auth: { roles: [...WHO], permission: 'tracking' } },
      schema: {
        operationId: 'revokeTripRecipientLink',
        tags: ['trips'],
        summary: 'Revoke the recipient tracking link at once; audited (404 when there is no live link)',
        params: TripParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await trips.revokeRecipientLink(actorOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/public/tracking/:token',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getPublicTracking',
        tags: ['trips'],
        summary:
          'What a recipient without an account sees from his link: status, ETA, the driver on the map while active, the delivery PIN',
        description:
          `No login. An unknown, forged, revoked or expired link (${LINK_HOURS_AFTER_END} hours after the trip ended) is 404, all alike. ` +
          `At most ${PUBLIC_TRACKING_PER_MINUTE} requests per minute per link, whatever the addresses they come from (recipients behind one ` +
          `address, a carrier's NAT, do not share a budget); at most ${PUBLIC_TRACKING_UNKNOWN_PER_MINUTE} per minute per client address ` +
          `for links that are not ours (forged or garbled). Beyond either: 429 RATE_LIMITED with Retry-After.`,
        params: Strict({ token: Type.String({ minLength: 20, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }) }),
        response: { 200: PublicTracking },
      },
    },
    async (req, reply) => {
      // Counted by every instance together: a link we issued (its MAC checked, no database) per link, so recipients
      // sharing an address never refuse each other nor all write one counter; anything else per address.
      const linkId = svc.recipientLinks.linkIdOf(req.params.token);
      const [key, limit, per] = linkId
        ? [`public-tracking:link:${linkId}`, PUBLIC_TRACKING_PER_MINUTE, 'for one link']
        : [`public-tracking:ip:${req.ip}`, PUBLIC_TRACKING_UNKNOWN_PER_MINUTE, 'for unknown links from one address'];
      const { weighted, resetSeconds } = await countRequest(ctx.db, key);
      if (weighted > limit) {
        throw new AppError(
          429,
          'RATE_LIMITED',
          `At most ${limit} tracking requests per minute ${per}; retry in ${resetSeconds} s`,
          undefined,
          {
            retry_after: resetSeconds,
            limit,
          },
        );
      }
      const view = await svc.recipientLinks.publicView(req.params.token);
      if (!view) throw AppError.notFound('Tracking link');
      reply.header('cache-control', 'no-store');
      return view;
    },
  );
}
