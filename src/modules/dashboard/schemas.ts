import { Type } from '@sinclair/typebox';
import { Literals, Nullable, Strict } from '../../platform/schemas.js';
import { READ_SCOPES } from '../../platform/scope.js';

export const DashboardOut = Type.Object({
  generated_at: Type.String({ format: 'date-time' }),
  scope: Literals(READ_SCOPES),
  sections: Type.Object({}, { additionalProperties: true }),
});

export const OnTimeLineOut = Type.Object({
  key: Nullable(
    Type.String({ description: 'territory, merchant or driver id, or the hour "HH" of the promise (organization time zone); null: none' }),
  ),
  name: Nullable(Type.String()),
  deliveries: Type.Integer({ description: 'completed trips with a promise' }),
  on_time: Type.Integer({ description: 'completed at or before promised_at' }),
  on_time_pct: Type.Number(),
  mean_late_min: Type.Number({ description: 'mean lateness in minutes (an early delivery counts 0)' }),
  p90_late_min: Type.Number(),
});
export const OnTimeOut = Type.Object({
  from: Nullable(Type.String()),
  to: Nullable(Type.String()),
  territory: Type.Array(OnTimeLineOut),
  merchant: Type.Array(OnTimeLineOut),
  driver: Type.Array(OnTimeLineOut),
  hour: Type.Array(OnTimeLineOut),
});
export const PeriodQuery = Strict({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'completed at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'completed before' })),
});
