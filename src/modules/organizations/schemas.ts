import { Type, type Static } from '@sinclair/typebox';
import {
  Email,
  Id,
  KnownCurrency,
  NewPassword,
  Nullable,
  PageQueryProps,
  Phone,
  PhoneCountry,
  ShortText,
  Strict,
  TimeZone,
  Timestamp,
} from '../../platform/schemas.js';

export const OPERATOR_STATUSES = ['pending', 'approved', 'rejected', 'suspended'] as const;
export const OperatorStatus = Type.Union(OPERATOR_STATUSES.map((s) => Type.Literal(s)));
export type OperatorStatus = Static<typeof OperatorStatus>;

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
export const SettingsOut = Type.Object({
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
export const BrandingOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  primary_color: Nullable(Type.String()),
  secondary_color: Nullable(Type.String()),
  logo_object_id: Nullable(Type.String()),
});

export const OnboardingBody = Strict({
  organization_name: ShortText(120, 2),
  slug: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$' })),
  legal_name: Type.Optional(ShortText(200, 2)),
  country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
  contact_phone: Type.Optional(Phone),
  admin: Strict({ email: Email, password: NewPassword, display_name: ShortText(120), phone: Type.Optional(Phone) }),
});

export const OnboardingOut = Type.Object({
  organization_id: Type.String(),
  slug: Type.String(),
  operator_id: Type.String(),
  status: OperatorStatus,
  admin_user_id: Type.String(),
});

export const OperatorListQuery = Strict({ ...PageQueryProps, status: Type.Optional(OperatorStatus) });
export type OperatorListQuery = Static<typeof OperatorListQuery>;

/** An operator decision: an optional reason, kept on the operator and in the audit entry. */
export const DecisionBody = Strict({ reason: Type.Optional(ShortText(500)) });

export const SettingsPatchBody = Strict(
  {
    require_platform_payment_before_order: Type.Optional(Type.Boolean()),
    default_currency: Type.Optional(KnownCurrency),
    timezone: Type.Optional(TimeZone),
    default_country: Type.Optional(PhoneCountry),
    support_phone: Type.Optional(Nullable(Phone)),
    support_email: Type.Optional(Nullable(Email)),
  },
  { minProperties: 1 },
);

export const BrandingPatchBody = Strict(
  {
    name: Type.Optional(ShortText(120, 2)),
    primary_color: Type.Optional(Nullable(Color)),
    secondary_color: Type.Optional(Nullable(Color)),
    logo_object_id: Type.Optional(Nullable(Id)),
  },
  { minProperties: 1 },
);
