import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { IdParams, Page, TooMany } from '../../platform/schemas.js';
import { PASSWORD_RULES } from '../identity/index.js';
import {
  BrandingOut,
  BrandingPatchBody,
  DecisionBody,
  OnboardingBody,
  OnboardingOut,
  OperatorListQuery,
  OperatorOut,
  SettingsOut,
  SettingsPatchBody,
} from './schemas.js';
import { OPERATOR_ACTIONS, type OperatorAction, type OrganizationService } from './service.js';

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

export function organizationRoutes(app: Api, svc: OrganizationService) {
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
        body: OnboardingBody,
        response: {
          201: OnboardingOut,
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
        querystring: OperatorListQuery,
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
          body: Type.Optional(DecisionBody),
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
        body: SettingsPatchBody,
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
        params: IdParams,
        body: BrandingPatchBody,
        response: { 200: BrandingOut },
      },
    },
    async (req) => svc.updateBranding(actorOf(req), req.params.id, req.body),
  );
}
