import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Id, Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import { Type } from '@sinclair/typebox';
import { BannerIn, BannerOut, BannerStateSchema, READS_DOC } from '../schemas.js';
import type { BannerService } from '../service/banners.js';

/** Zone banners shown in the customer marketplace of their territories. */
export function bannerRoutes(app: Api, banners: BannerService) {
  app.get(
    '/subadmin/banners',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'banners_manage' } },
      schema: {
        operationId: 'listZoneBanners',
        tags: ['subadmin'],
        summary: "Zone banners linked to the caller's territories, newest first",
        description: READS_DOC,
        querystring: Strict({ ...PageQueryProps, territory_id: Type.Optional(Id), state: Type.Optional(BannerStateSchema) }),
        response: { 200: Page(BannerOut) },
      },
    },
    async (req) => banners.list(actorOf(req), req.query),
  );
  app.post(
    '/subadmin/banners',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'banners_manage' } },
      schema: {
        operationId: 'createZoneBanner',
        tags: ['subadmin'],
        summary: 'Create a zone banner shown in the customer marketplace of its territories while active and valid',
        description:
          'territory_ids must exist and, for a sub-administrator, be his (422 TERRITORY_NOT_FOUND). The image is a storage object of purpose `coupon_asset` or `other` ' +
          'uploaded by the caller (422 STORAGE_OBJECT_*). valid_until must be after valid_from (422 INVALID_VALIDITY); valid_from defaults to now. Audited.',
        body: BannerIn,
        response: { 201: BannerOut },
      },
    },
    async (req, reply) => reply.code(201).send(await banners.create(actorOf(req), req.body)),
  );
}
