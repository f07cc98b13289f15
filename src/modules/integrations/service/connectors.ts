/** The inbound payment connectors; their names are neutral stand-ins for two external partners. */
export const PAYMENT_CONNECTORS = ['partner-pay', 'partner-chef-pay'] as const;
export type PaymentConnector = (typeof PAYMENT_CONNECTORS)[number];

/** Environment setting holding each connector's webhook signing secret. */
export const WEBHOOK_SECRET_SETTING: Record<PaymentConnector, 'PARTNER_PAY_WEBHOOK_SECRET' | 'PARTNER_CHEF_PAY_WEBHOOK_SECRET'> = {
  'partner-pay': 'PARTNER_PAY_WEBHOOK_SECRET',
  'partner-chef-pay': 'PARTNER_CHEF_PAY_WEBHOOK_SECRET',
};

/**
 * Roadmap states: `available` (usable now), `planned` (scheduled for a coming release),
 * `future` (contract reserved, not active, no release scheduled).
 */
export type RoadmapState = 'available' | 'planned' | 'future';

export interface RoadmapEntry {
  key: string;
  name: string;
  category: 'payments' | 'chat';
  state: RoadmapState;
  description: string;
}

export const ROADMAP: RoadmapEntry[] = [
  {
    key: 'partner-pay',
    name: 'Partner Pay',
    category: 'payments',
    state: 'future',
    description:
      'Platform prepayment connector. Not active in V0.7.2: payment intents answer FUTURE_INTEGRATION_NOT_RELEASED; signed callbacks are stored and acknowledged without effect.',
  },
  {
    key: 'partner-chef-pay',
    name: 'Partner Chef Pay',
    category: 'payments',
    state: 'future',
    description: 'Second platform payment connector. Not active in V0.7.2; signed callbacks are stored and acknowledged without effect.',
  },
  {
    key: 'platform-payment-settings',
    name: 'Platform payment settings (PATCH /integrations/payments)',
    category: 'payments',
    state: 'planned',
    description: 'Enabling a payment connector per organization; follows the release of a connector.',
  },
  {
    key: 'chat-link',
    name: 'Chat click-to-chat links',
    category: 'chat',
    state: 'available',
    description: 'Merchant order mirror as click-to-chat links (chat_mode `link`).',
  },
  {
    key: 'chat-cloud-api',
    name: 'Chat cloud API',
    category: 'chat',
    state: 'available',
    description:
      'Merchant order mirror sent through a chat cloud API (chat_mode `cloud_api`); needs CHAT_CLOUD_API_URL and a per-merchant secret reference.',
  },
];
