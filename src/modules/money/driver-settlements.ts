import { Type } from '@sinclair/typebox';
import { actorOf, tenantOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, IdParams, Money, Nullable, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { assertTransition, type Transitions } from '../../platform/state-machine.js';

export type DriverSettlementStatus = 'pending' | 'paid';
export const DRIVER_SETTLEMENT_TRANSITIONS: Transitions<DriverSettlementStatus> = { pending: ['paid'], paid: [] };

const COLUMNS = 'id, driver_id, status, cutoff_at, amount, trip_count, currency, note, payment_reference, created_by_user_id, paid_by_user_id, paid_at, created_at, updated_at';

interface SettlementRow {
  id: string;
  driver_id: string;
  status: DriverSettlementStatus;
  cutoff_at: Date;
  amount: string;
  trip_count: number;
  currency: string;
  note: string | null;
  payment_reference: string | null;
  created_by_user_id: string | null;
  paid_by_user_id: string | null;
  paid_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function createDriverSettlementService(ctx: MoneyContext) {
  /** The driver's completed-trip earnings up to the cut-off (from logistics), without the trips already in a settlement. */
  async function earnings(tx: Tx, driverId: string, upTo: Date) {
    const all = await ctx.deps.logistics.completedTripEarnings(tx, driverId, upTo);
    if (all.length === 0) return all;
    const { rows } = await tx.query<{ trip_id: string }>('SELECT trip_id FROM driver_settlement_item WHERE trip_id = ANY($1::text[])', [all.map((e) => e.trip_id)]);
    const settled = new Set(rows.map((r) => r.trip_id));
    return all.filter((e) => !settled.has(e.trip_id));
  }

  /**
   * Settles every unsettled earning up to the cut-off. Each trip goes in with INSERT ... ON CONFLICT DO NOTHING on
   * the item's key (organization, trip): when two requests race, the second waits for the first and keeps only
   * what the first did not take; with nothing left it is refused (422 NOTHING_TO_SETTLE) and rolls back.
   */
  async function create(actor: Actor, driverId: string, input: { up_to?: string; note?: string }) {
    const upTo = input.up_to ? new Date(input.up_to) : new Date();
    if (upTo.getTime() > Date.now() + 60_000) throw AppError.unprocessable('The cut-off may not be in the future', 'CUTOFF_IN_FUTURE', [{ field: 'up_to', message: 'in the future' }]);
    return ctx.db.withTenant(tenantOf(actor), async (tx) => {
      const driver = await ctx.deps.logistics.getDriver(tx, driverId);
      if (!driver) throw AppError.notFound('Driver');
      const candidates = await earnings(tx, driverId, upTo);
      if (candidates.length === 0) throw AppError.unprocessable('The driver has no unsettled earnings up to the cut-off', 'NOTHING_TO_SETTLE');
      const currencies = new Set(candidates.map((c) => c.currency));
      if (currencies.size > 1) throw AppError.unprocessable('Earnings in more than one currency', 'MIXED_CURRENCIES');
      const id = newId();
      await tx.query(
        `INSERT INTO driver_settlement (organization_id, id, driver_id, cutoff_at, amount, trip_count, currency, note, created_by_user_id)
         VALUES ($1, $2, $3, $4, 0, 0, $5, $6, $7)`,
        [actor.organizationId, id, driverId, upTo, candidates[0].currency, input.note ?? null, actor.userId],
      );
      const { rows: items } = await tx.query<{ amount: string }>(
        `INSERT INTO driver_settlement_item (organization_id, trip_id, settlement_id, amount, completed_at)
         SELECT $1, x.trip_id, $2, x.amount, x.completed_at
           FROM jsonb_to_recordset($3::jsonb) AS x(trip_id text, amount numeric, completed_at timestamptz)
         ON CONFLICT (organization_id, trip_id) DO NOTHING RETURNING amount`,
        [actor.organizationId, id, JSON.stringify(candidates)],
      );
      if (items.length === 0) throw AppError.unprocessable('The driver has no unsettled earnings up to the cut-off', 'NOTHING_TO_SETTLE');
      const { rows } = await tx.query<SettlementRow>(
        `UPDATE driver_settlement SET amount = (SELECT sum(amount) FROM driver_settlement_item WHERE settlement_id = $1), trip_count = $2, updated_at = now()
          WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, items.length],
      );
      await recordAudit(tx, actor, { action: 'driver_settlement.created', entityType: 'driver_settlement', entityId: id, after: { driver_id: driverId, amount: rows[0].amount, trip_count: items.length, cutoff_at: upTo } });
      await ctx.events.record(tx, actor.organizationId, {
        type: 'driver_settlement.created',
        entityType: 'driver_settlement',
        entityId: id,
        actorUserId: actor.userId,
        audienceUserIds: [driver.user_id],
        payload: { amount: rows[0].amount, currency: rows[0].currency, trip_count: items.length },
      });
      return rows[0];
    });
  }

  async function markPaid(actor: Actor, id: string, input: { payment_reference?: string }) {
    return ctx.db.withTenant(tenantOf(actor), async (tx) => {
      const { rows } = await tx.query<SettlementRow>(`SELECT ${COLUMNS} FROM driver_settlement WHERE id = $1 FOR UPDATE`, [id]);
      if (!rows[0]) throw AppError.notFound('Settlement');
      assertTransition('Settlement', DRIVER_SETTLEMENT_TRANSITIONS, rows[0].status, 'paid');
      const { rows: out } = await tx.query<SettlementRow>(
        `UPDATE driver_settlement SET status = 'paid', paid_at = now(), paid_by_user_id = $2, payment_reference = $3, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, actor.userId, input.payment_reference ?? null],
      );
      await recordAudit(tx, actor, { action: 'driver_settlement.paid', entityType: 'driver_settlement', entityId: id, before: { status: 'pending' }, after: { status: 'paid', amount: out[0].amount } });
      const driver = await ctx.deps.logistics.getDriver(tx, out[0].driver_id);
      await ctx.events.record(tx, actor.organizationId, {
        type: 'driver_settlement.paid',
        entityType: 'driver_settlement',
        entityId: id,
        actorUserId: actor.userId,
        audienceUserIds: driver ? [driver.user_id] : [],
        payload: { amount: out[0].amount, currency: out[0].currency },
      });
      return out[0];
    });
  }

  async function listOwn(actor: Actor, q: { status?: DriverSettlementStatus; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    return ctx.db.withTenant(tenantOf(actor), async (tx) => {
      const driver = await ctx.deps.logistics.driverOfUser(tx, actor.userId);
      if (!driver) throw AppError.notFound('Driver');
      const { rows } = await tx.query<SettlementRow>(
        `SELECT ${COLUMNS} FROM driver_settlement WHERE driver_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4`,
        [driver.id, q.status ?? null, page.after, page.limit + 1],
      );
      const totals = await tx.query<{ pending: string; paid: string }>(
        `SELECT COALESCE(sum(amount) FILTER (WHERE status = 'pending'), 0)::numeric(14,2) AS pending, COALESCE(sum(amount) FILTER (WHERE status = 'paid'), 0)::numeric(14,2) AS paid
           FROM driver_settlement WHERE driver_id = $1`,
        [driver.id],
      );
      return { ...toPage(rows, page), totals: totals.rows[0] };
    });
  }

  return { create, markPaid, listOwn };
}

const StatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('paid')]);
export const SettlementOut = Type.Object({
  id: Type.String(),
  driver_id: Type.String(),
  status: StatusSchema,
  cutoff_at: Timestamp,
  amount: Money,
  trip_count: Type.Integer(),
  currency: Type.String(),
  note: Nullable(Type.String()),
  payment_reference: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  paid_by_user_id: Nullable(Type.String()),
  paid_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export function driverSettlementRoutes(app: Api, ctx: MoneyContext) {
  const svc = createDriverSettlementService(ctx);
  app.post(
    '/admin/drivers/:driverId/settlements',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'createDriverSettlement',
        tags: ['settlements'],
        summary: "Settles all of a driver's unsettled earnings up to a cut-off (default now)",
        description:
          "Earnings are completed trips' `driver_earning`. A trip's earning is settled at most once, also when two requests race (the later one keeps " +
          'only what is left, or gets 422 NOTHING_TO_SETTLE). The settlement starts `pending`; `POST /admin/settlements/:id/paid` moves it to `paid`.',
        params: Strict({ driverId: Id }),
        body: Strict({ up_to: Type.Optional(Type.String({ format: 'date-time' })), note: Type.Optional(ShortText(500)) }),
        response: { 201: SettlementOut },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.create(actorOf(req), req.params.driverId, (req.body ?? {}) as { up_to?: string; note?: string })),
  );
  app.post(
    '/admin/settlements/:id/paid',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'markDriverSettlementPaid',
        tags: ['settlements'],
        summary: 'Marks a driver settlement paid: `pending → paid`; any other state is 409 INVALID_TRANSITION',
        params: IdParams,
        body: Strict({ payment_reference: Type.Optional(ShortText(200)) }),
        response: { 200: SettlementOut },
      },
    },
    async (req) => svc.markPaid(actorOf(req), req.params.id, (req.body ?? {}) as { payment_reference?: string }),
  );
  app.get(
    '/driver/settlements',
    {
      config: { auth: { roles: ['repartidor'] } },
      schema: {
        operationId: 'listMySettlements',
        tags: ['driver'],
        summary: "The calling driver's settlements, newest first, with totals pending and paid",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(StatusSchema) }),
        response: { 200: Type.Object({ data: Type.Array(SettlementOut), next_cursor: Nullable(Type.String()), totals: Type.Object({ pending: Money, paid: Money }) }) },
      },
    },
    async (req) => svc.listOwn(actorOf(req), req.query as { status?: DriverSettlementStatus }),
  );
}
