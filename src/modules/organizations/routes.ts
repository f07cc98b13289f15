import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import {
  Email,
  TooMany,
  IdParams,
  Nullable,
  Page,
  PageQueryProps,
  Phone,
  ShortText,
  Strict,
  Timestamp,
  Id,
  NewPassword,
  KnownCurrency,
  TimeZone,
  PhoneCountry,
} from '../../platform/schemas.js';
import type { Api, AppContext } from '../../platform/context.js';
import { OPERATOR_ACTIONS, type OperatorAction, type OrganizationService } from './service.js';
import { PASSWORD_RULES } from '../identity/routes.js';

const OperatorStatus = Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('suspended')]);
export const OperatorOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  organization_name: Type.Optional(Type.String()),
  status: OperatorStatus,
  legal_name: Type.String(),
  contact_email: Type.String(),
  contact_phone: Nullable(Type.String()),
  country: Nullable(Type.String()),
  status_reason: Nullable(Type.String()),
  decided_by_user_id: Nullable(Type.String()),
  decided_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const SettingsOut = Type.Object({
  require_platform_payment_before_order: Type.Boolean(),
  default_currency: Type.String(),
  timezone: Type.String(),
  default_country: Type.String({
    description: 'ISO 3166-1 alpha-2: phone numbers typed without a +country code are numbers of this country',
  }),
  support_phone: Nullable(Type.String()),
  support_email: Nullable(Type.String()),
  updated_at: Timestamp,
});
const Color = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: '#RRGGBB' });
const BrandingOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  primary_color: Nullable(Type.String()),
  secondary_color: Nullable(Type.String()),
  logo_object_id: Nullable(Type.String()),
});

export const CONTRACT = {
  api_version: 'v1',
  base_path: '/api/v1',
  release: 'V0.7.2',
  releases: [
    { label: 'V0.6.1', notes: 'mobile production release: the base set of routes' },
    { label: 'V0.7.1', notes: 'sub-administration by territory, direct payments and reviews, merchant coupons, delivery express' },
    { label: 'V0.7.2', notes: 'chat channel, territory tariffs, optimized dispatch, automatic merchant settlement, commission guardrail' },
  ],
  openapi_url: '/api/v1/openapi.json',
  docs_url: '/docs',
  payment_connectors: { state: 'future', note: 'payment-intent routes are a reserved contract (FUTURE_INTEGRATION_NOT_RELEASED)' },
};

export function organizationRoutes(app: Api, ctx: AppContext, svc: OrganizationService) {
  app.get(
    '/contracts/current',
    {
      config: { auth: 'public' },
      schema: { operationId: 'getCurrentContract', tags: ['system'], response: { 200: Type.Object({}, { additionalProperties: true }) } },
    },
    async () => CONTRACT,
  );

  app.post(
    '/onboarding',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'onboardOperator',
        tags: ['onboarding'],
        summary: 'Create an organization, its operator account (pending) and its first administrator',
        description:
          'Public. The administrator is a new account of the new organization: an email that already has accounts elsewhere keeps them ' +
          'unchanged (at login the password decides which account). The answer is the same whether or not the email is registered. ' +
          PASSWORD_RULES +
          ' ' +
          'Rate limited per client address (ONBOARDING_RATE_LIMIT_PER_IP, default 10 per hour) and per email ' +
          '(ONBOARDING_RATE_LIMIT_PER_EMAIL, default 3 per hour): 429 RATE_LIMITED with Retry-After.',
        body: Strict({
          organization_name: ShortText(120, 2),
          slug: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$' })),
          legal_name: Type.Optional(ShortText(200, 2)),
          country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
          contact_phone: Type.Optional(Phone),
          admin: Strict({ email: Email, password: NewPassword, display_name: ShortText(120), phone: Type.Optional(Phone) }),
        }),
        response: {
          201: Type.Object({
            organization_id: Type.String(),
            slug: Type.String(),
            operator_id: Type.String(),
            status: OperatorStatus,
            admin_user_id: Type.String(),
          }),
          429: TooMany,
        },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.onboard(req.body, req.ip)),
  );

  app.get(
    '/operators',
    {
      config: { auth: { roles: ['platform', 'administrator'], allowUnapprovedOperator: true } },
      schema: {
        operationId: 'listOperators',
        tags: ['onboarding'],
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(OperatorStatus) }),
        response: { 200: Page(OperatorOut) },
      },
    },
    async (req) => svc.listOperators(actorOf(req), req.query),
  );

  for (const action of Object.keys(OPERATOR_ACTIONS) as OperatorAction[]) {
    app.post(
      `/operators/:id/${action}`,
      {
        config: { auth: { roles: ['platform'] } },
        schema: {
          operationId: `${action}Operator`,
          tags: ['onboarding'],
          summary: `${action} an operator (pending → approved | rejected, approved → suspended → approved)`,
          params: IdParams,
          body: Type.Optional(Strict({ reason: Type.Optional(ShortText(500)) })),
          response: { 200: OperatorOut },
        },
      },
      async (req) => svc.decideOperator(actorOf(req), req.params.id, action, req.body?.reason),
    );
  }

  app.get(
    '/settings',
    {
      config: { auth: { roles: ['administrator'], allowUnapprovedOperator: true } },
      schema: { operationId: 'getSettings', tags: ['settings'], response: { 200: SettingsOut } },
    },
    async (req) => svc.getSettings(actorOf(req)),
  );

  app.patch(
    '/settings',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'updateSettings',
        tags: ['settings'],
        description:
          '`default_currency` is the one currency of the organization (ISO 4217, 400 for an unknown code): catalog items, tariffs, delivery fees, orders, ' +
          'trips, wallets and reports all use it, and anything in another currency is refused when created. It cannot change once an item, an order or a ' +
          'trip exists (409 CURRENCY_IN_USE). `timezone` must be an IANA zone (400 otherwise). `default_country` (ISO 3166-1 alpha-2, default BO, or the ' +
          'onboarding `country`) is the country of phone numbers typed without a +country code: every phone the API stores (users, merchants, branches, ' +
          'express customers, trip recipients, chat and support phones) is normalised to E.164 with it; an invalid number is 400 INVALID_PHONE. ' +
          'Changing it does not rewrite numbers already stored.',
        body: Strict(
          {
            require_platform_payment_before_order: Type.Optional(Type.Boolean()),
            default_currency: Type.Optional(KnownCurrency),
            timezone: Type.Optional(TimeZone),
            default_country: Type.Optional(PhoneCountry),
            support_phone: Type.Optional(Nullable(Phone)),
            support_email: Type.Optional(Nullable(Email)),
          },
          { minProperties: 1 },
        ),
        response: { 200: SettingsOut },
      },
    },
    async (req) => svc.updateSettings(actorOf(req), req.body),
  );

  app.patch(
    '/organizations/:id/branding',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'updateBranding',
        tags: ['settings'],
        params: Strict({ id: Id }),
        body: Strict(
          {
            name: Type.Optional(ShortText(120, 2)),
            primary_color: Type.Optional(Nullable(Color)),
            secondary_color: Type.Optional(Nullable(Color)),
            logo_object_id: Type.Optional(Nullable(Id)),
          },
          { minProperties: 1 },
        ),
        response: { 200: BrandingOut },
      },
    },
    async (req) => svc.updateBranding(actorOf(req), req.params.id, req.body),
  );
}
