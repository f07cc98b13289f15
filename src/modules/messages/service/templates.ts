import { PLACEHOLDERS, type Language, type MessageKind, type Placeholder } from '../schemas.js';

/** The built-in texts of the messages a trip's recipient gets, and the renderer. */

export type MessageValues = Record<Placeholder, string>;

export const DEFAULT_TEMPLATES: Record<MessageKind, Record<Language, string>> = {
  order_confirmed: {
    es: 'Hola {recipient_name}, {merchant_name} confirmó tu pedido. Síguelo aquí: {tracking_link}',
    en: 'Hi {recipient_name}, {merchant_name} confirmed your order. Follow it here: {tracking_link}',
  },
  driver_assigned: {
    es: 'Hola {recipient_name}, un repartidor ya lleva tu pedido de {merchant_name}. Síguelo aquí: {tracking_link}',
    en: 'Hi {recipient_name}, a driver is taking your order from {merchant_name}. Follow it here: {tracking_link}',
  },
  arriving_soon: {
    es: 'Tu pedido de {merchant_name} llega en unos {eta_minutes} min (hacia las {eta_time}). {tracking_link}',
    en: 'Your order from {merchant_name} arrives in about {eta_minutes} min (around {eta_time}). {tracking_link}',
  },
  delivered: {
    es: 'Tu pedido de {merchant_name} fue entregado. ¡Gracias!',
    en: 'Your order from {merchant_name} was delivered. Thank you!',
  },
  failed: {
    es: 'No pudimos entregar tu pedido de {merchant_name}. Te contactaremos para coordinar. {tracking_link}',
    en: 'We could not deliver your order from {merchant_name}. We will contact you to arrange it. {tracking_link}',
  },
};

/** The placeholders of a text that are not known (in order of appearance, once each). */
export function unknownPlaceholders(text: string): string[] {
  const known = new Set<string>(PLACEHOLDERS);
  const out: string[] = [];
  for (const m of text.matchAll(/\{([^{}]*)\}/g)) {
    const name = m[1]!;
    if (!known.has(name) && !out.includes(name)) out.push(name);
  }
  return out;
}

/**
 * The text with each placeholder replaced by its value. An empty value leaves no stray space before punctuation
 * ("Hola {recipient_name}, ..." without a name reads "Hola, ...").
 */
export function render(text: string, values: MessageValues): string {
  return text
    .replace(/\{([a-z_]+)\}/g, (whole, name: string) => (name in values ? values[name as Placeholder] : whole))
    .replace(/[ \t]+([,.!?;:])/g, '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** The ETA as a clock time in the organization's time zone, e.g. "14:35". */
export function clockTime(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hour12: false }).format(at);
}
