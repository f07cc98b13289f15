import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { pageRequest } from '../../../platform/pagination.js';
import { IdParams, Nullable, PageQueryProps, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { CustomerTripOut } from '../schemas.js';
import { listOwnTrips, ownTrip } from '../service/customer-trips.js';
import { Type } from '@sinclair/typebox';

export function customerTripRoutes(app: Api, ctx: CommerceContext) {
  app.get(
    '/customer/trips',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'listCustomerTrips',
        tags: ['customer'],
        summary: "The trips of the calling customer's orders, newest order first, with the delivery PIN and the driver's position",
        querystring: Strict(PageQueryProps),
        response: { 200: Type.Object({ data: Type.Array(CustomerTripOut), next_cursor: Nullable(Type.String()) }) },
      },
    },
    async (req) => {
      return listOwnTrips(ctx, actorOf(req), pageRequest(req.query));
    },
  );

  app.get(
    '/customer/trips/:id',
    {
      config: { auth: { roles: ['delivery'] } },
      schema: {
        operationId: 'getCustomerTrip',
        tags: ['customer'],
        summary: "One of the caller's trips: status, the driver's last position, the delivery PIN (404 for anyone else's trip)",
        params: IdParams,
        response: { 200: CustomerTripOut },
      },
    },
    async (req) => {
      return ownTrip(ctx, actorOf(req), req.params.id);
    },
  );
}
