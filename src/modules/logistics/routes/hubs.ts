import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Id, IdParams, Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import { HubBody, HubOut } from '../schemas.js';
import type { HubService } from '../service/hubs.js';

const READ = { auth: { roles: ['administrator' as const, 'dispatch' as const, 'subadmin' as const] } };
const WRITE = { auth: { roles: ['administrator' as const, 'subadmin' as const] } };
const SCOPE = 'Sub-administrators: only hubs in their territories (others are 404).';
const PLACE =
  "`location` must lie inside one of the organization's active territories (a sub-administrator's: one of his), else 422 HUB_OUTSIDE_TERRITORY " +
  'naming the field; the hub takes that territory. Nothing is written on any 4xx.';

export function hubRoutes(app: Api, hubs: HubService['requests']) {
  app.get(
    '/hubs',
    {
      config: READ,
      schema: {
        operationId: 'listHubs',
        tags: ['logistics'],
        summary: 'Hubs: places where planned routes may start and end, with opening hours (newest first)',
        description: SCOPE,
        querystring: Strict({ ...PageQueryProps, active: Type.Optional(Type.Boolean()), territory_id: Type.Optional(Id) }),
        response: { 200: Page(HubOut) },
      },
    },
    async (req) => hubs.list(actorOf(req), req.query),
  );

  app.post(
    '/hubs',
    {
      config: WRITE,
      schema: {
        operationId: 'createHub',
        tags: ['logistics'],
        summary: 'Create a hub; audited',
        description: `${PLACE} ${SCOPE}`,
        body: Strict({
          name: HubBody.name,
          address: HubBody.address,
          location: HubBody.location,
          opening_hours: Type.Optional(HubBody.opening_hours),
          active: Type.Optional(HubBody.active),
        }),
        response: { 201: HubOut },
      },
    },
    async (req, reply) => reply.code(201).send(await hubs.create(actorOf(req), req.body)),
  );

  app.get(
    '/hubs/:id',
    {
      config: READ,
      schema: {
        operationId: 'getHub',
        tags: ['logistics'],
        summary: 'A hub',
        description: SCOPE,
        params: IdParams,
        response: { 200: HubOut },
      },
    },
    async (req) => hubs.get(actorOf(req), req.params.id),
  );

  app.patch(
    '/hubs/:id',
    {
      config: WRITE,
      schema: {
        operationId: 'updateHub',
        tags: ['logistics'],
        summary: 'Change a hub (any of its fields; opening_hours replaces the whole list); audited',
        description: `${PLACE} ${SCOPE}`,
        params: IdParams,
        body: Strict(
          {
            name: Type.Optional(HubBody.name),
            address: Type.Optional(HubBody.address),
            location: Type.Optional(HubBody.location),
            opening_hours: Type.Optional(HubBody.opening_hours),
            active: Type.Optional(HubBody.active),
          },
          { minProperties: 1 },
        ),
        response: { 200: HubOut },
      },
    },
    async (req) => hubs.update(actorOf(req), req.params.id, req.body),
  );

  app.delete(
    '/hubs/:id',
    {
      config: WRITE,
      schema: {
        operationId: 'deleteHub',
        tags: ['logistics'],
        summary: 'Delete a hub (plans already made keep their routes); audited',
        description: SCOPE,
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await hubs.remove(actorOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}
