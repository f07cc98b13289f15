import { Type } from '@sinclair/typebox';
import { Literals, Nullable, Timestamp } from '../../platform/schemas.js';
import { LANGUAGES, PREFERENCE_CHANGERS } from './tables.js';

export { LANGUAGES };

/** The messages a trip's recipient gets, their languages and the placeholders a template may use. */
export const MESSAGE_KINDS = ['order_confirmed', 'driver_assigned', 'arriving_soon', 'delivered', 'failed'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];
export type Language = (typeof LANGUAGES)[number];
export type PreferenceChanger = (typeof PREFERENCE_CHANGERS)[number];

/** Every placeholder a template may use; anything else in braces is refused. */
export const PLACEHOLDERS = ['recipient_name', 'merchant_name', 'organization_name', 'eta_time', 'eta_minutes', 'tracking_link'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export const Kind = Type.Union(
  MESSAGE_KINDS.map((k) => Type.Literal(k)),
  { description: 'order_confirmed, driver_assigned, arriving_soon, delivered or failed' },
);
export const Language = Type.Union(LANGUAGES.map((l) => Type.Literal(l)));
export const Body = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: `the text, with placeholders among ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}; any other {name} is 400 UNKNOWN_PLACEHOLDER`,
});

export const SettingsOut = Type.Object({
  arriving_soon_min: Type.Integer({ description: '"arriving soon" is sent once the ETA to the drop-off is this many minutes or less' }),
  eta_message_period_min: Type.Integer({ description: 'at most one "arriving soon" message per trip in this many minutes' }),
  default_language: Language,
  placeholders: Type.Array(Type.String()),
  templates: Type.Array(
    Type.Object({
      kind: Kind,
      language: Language,
      body: Type.String(),
      customized: Type.Boolean({ description: 'false: the built-in text' }),
    }),
  ),
});

export const PreferenceOut = Type.Object({
  id: Type.String(),
  phone: Type.String(),
  opted_out: Type.Boolean(),
  opted_out_at: Nullable(Timestamp),
  language: Nullable(Language),
  changed_by: Literals(PREFERENCE_CHANGERS),
  updated_at: Timestamp,
});
