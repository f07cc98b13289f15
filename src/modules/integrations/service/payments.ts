import { AppError } from '../../../platform/errors.js';
import type { Config } from '../../../config.js';

/** Status of every reserved payment contract while the connectors are not released. */
export const FUTURE_INTEGRATION_STATUS = 501;
export const FUTURE_INTEGRATION_CODE = 'FUTURE_INTEGRATION_NOT_RELEASED';

/** The error of a reserved payment contract (501 `FUTURE_INTEGRATION_NOT_RELEASED`). */
export function futureIntegrationNotReleased(what = 'Platform payment connectors'): AppError {
  return new AppError(
    FUTURE_INTEGRATION_STATUS,
    FUTURE_INTEGRATION_CODE,
    `${what} are not released in this version; they are reserved for a future version`,
  );
}

/**
 * For the reserved routes POST /customer/checkout/payment-intent and GET /customer/checkout/payment-intents/:id
 * (commerce): always throws; these routes take no part in order creation.
 */
export function refusePaymentIntent(): never {
  throw futureIntegrationNotReleased('Payment intents');
}

/**
 * Is a platform payment connector ready? False in this version, so the rule
 * `require_platform_payment_before_order` never refuses an order. `PAYMENT_CONNECTOR_READY=true`
 * forces it on (tests of the rule only); no connector exists to authorize an intent.
 */
export function paymentConnectorReadyFrom(config: { settings: Pick<Config['settings'], 'PAYMENT_CONNECTOR_READY'> }): boolean {
  return config.settings.PAYMENT_CONNECTOR_READY;
}
