/** Spanish (default: the users are in Spanish-speaking markets) and English labels. */
import { driverEn, driverEs } from './i18n-driver';

const es = {
  ...driverEs,
  title: 'Consola de despacho',
  login: 'Iniciar sesión',
  email: 'Correo electrónico',
  password: 'Contraseña',
  logout: 'Cerrar sesión',
  language: 'Idioma',
  dispatch: 'Despacho',
  approvals: 'Aprobaciones',
  settings: 'Configuración',
  map: 'Mapa',
  drivers: 'Repartidores',
  available: 'Disponible',
  busy: 'Ocupado',
  offline: 'Desconectado',
  board: 'Tablero',
  filters: 'Filtros',
  territory: 'Territorio',
  merchant: 'Comercio',
  status: 'Estado',
  search: 'Buscar',
  all: 'Todos',
  pending: 'Pendiente',
  assigned: 'Asignado',
  accepted: 'Aceptado',
  picked_up: 'Recogido',
  in_transit: 'En camino',
  completed: 'Entregado',
  cancelled: 'Cancelado',
  returning: 'Devolviendo',
  returned: 'Devuelto',
  failed: 'Fallido',
  approved: 'Aprobado',
  rejected: 'Rechazado',
  suspended: 'Suspendido',
  trip: 'Viaje',
  pickup: 'Recogida',
  dropoff: 'Entrega',
  driver: 'Repartidor',
  fee: 'Tarifa',
  timeline: 'Historial',
  proofs: 'Pruebas',
  tracking: 'Seguimiento',
  candidates: 'Candidatos',
  assign: 'Asignar',
  autoAssign: 'Asignación automática',
  cancel: 'Cancelar viaje',
  cancelReason: 'Motivo de la cancelación',
  close: 'Cerrar',
  distance: 'Distancia',
  eta: 'Llegada estimada',
  eligible: 'Apto',
  notEligible: 'No apto',
  none: 'Ninguno',
  select: 'Seleccionar',
  optimize: 'Optimizar seleccionados',
  plan: 'Plan de despacho',
  commit: 'Confirmar plan',
  discard: 'Descartar',
  unassigned: 'Sin asignar',
  route: 'Ruta',
  stops: 'paradas',
  approve: 'Aprobar',
  reject: 'Rechazar',
  merchants: 'Comercios',
  documents: 'Documentos',
  paymentReviews: 'Revisiones de pago',
  nothingPending: 'Nada pendiente.',
  save: 'Guardar',
  saved: 'Guardado',
  organization: 'Organización',
  logistics: 'Logística',
  live: 'En vivo',
  reconnecting: 'Reconectando…',
  recipientLink: 'Enlace para el destinatario',
  issueLink: 'Crear enlace',
  noTiles: 'Mapa sin teselas (sin conexión)',
  loginFailed: 'No se pudo iniciar sesión',
  error: 'Error',
  refresh: 'Actualizar',
  selected: 'seleccionados',
  activeTrips: 'Viajes activos',
  minutes: 'min',
  yourDelivery: 'Tu entrega',
  deliveryPin: 'PIN de entrega',
  pinHint: 'Dáselo al repartidor solo al recibir tu pedido.',
  from: 'De',
  destination: 'Destino',
  updated: 'Actualizado',
  linkInvalid: 'Este enlace de seguimiento no es válido o ha caducado.',
  driverOnMap: 'Repartidor en el mapa',
  arrivingIn: 'Llega en',
  skipToContent: 'Saltar al contenido',
  created: 'Creado',
  noProofs: 'Sin pruebas',
  require_platform_payment_before_order: 'Exigir pago en la plataforma antes del pedido',
  default_currency: 'Moneda',
  timezone: 'Zona horaria',
  default_country: 'País',
  support_phone: 'Teléfono de soporte',
  support_email: 'Correo de soporte',
  auto_assign_radius_m: 'Radio de asignación automática (m)',
  acceptance_timeout_s: 'Tiempo para aceptar (s)',
  acceptance_timeout_enabled: 'Tiempo para aceptar activo',
  acceptance_max_offers: 'Ofertas máximas',
  assignment_strategy: 'Estrategia de asignación',
  failed_delivery_policy: 'Política de entrega fallida',
  geofence_radius_m: 'Radio de geocerca (m)',
  average_speed_kmh: 'Velocidad media (km/h)',
  default_delivery_fee: 'Tarifa de entrega por defecto',
  driver_flat_fee: 'Pago fijo al repartidor',
  currency: 'Moneda',
  sessionExpired: 'Tu sesión ha caducado. Vuelve a iniciar sesión.',
  staffOnly: 'Esta consola es para el personal de despacho y administración; tu cuenta no tiene acceso.',
  goDriver: 'Si eres repartidor, usa la app del repartidor:',
  goMerchant: 'Si tienes un comercio, usa la página del comercio:',
  goCustomer: 'Si eres cliente, sigue tu pedido desde la app o con el enlace de seguimiento que recibiste.',
  noConnection: 'Sin conexión con el servidor. Revisa tu conexión e inténtalo de nuevo.',
  streamLimit: 'Demasiadas pestañas en vivo abiertas con tu usuario (límite {n}). Cierra alguna; reintento en {s} s.',
  streamRetry: 'Sin conexión en vivo; reintento en {s} s.',
  columns: 'Columnas del tablero',
  boardHint: 'Desplaza el tablero a la derecha o elige una columna:',
  trouble: 'Problemas',
  adminDecides: 'Solo un administrador puede aprobar o rechazar; aquí ves lo pendiente.',
  adminDecidesDocs: 'Solo un administrador revisa documentos; aquí ves lo pendiente.',
  nothingToSave: 'No hay cambios que guardar.',
  selectedOne: 'seleccionado',
  selectedMany: 'seleccionados',
  assignedOne: 'asignado',
  assignedMany: 'asignados',
  at_capacity: 'sin capacidad libre',
  not_available: 'no disponible',
  rejected_this_trip: 'rechazó este viaje',
  outside_territory: 'fuera del territorio',
  current_driver: 'ya es el repartidor',
  strategy_nearest: 'El más cercano',
  strategy_least_loaded: 'El menos cargado',
  policy_return_to_merchant: 'Devolver al comercio',
  policy_close: 'Cerrar como fallido',
  reissueLink: 'Crear enlace nuevo',
  reissueWarn: 'El enlace actual dejará de funcionar: quien lo recibió ya no podrá seguir la entrega con él.',
  reissueConfirm: 'Sí, crear uno nuevo',
  keepLink: 'Mantener el actual',
  linkReissued: 'Enlace nuevo creado; el anterior ya no funciona.',
  ago: 'hace {n}',
  staleGps: 'GPS sin actualizar',
  gps: 'GPS',
  recipient: 'Destinatario',
  promise: 'Prometido',
  lateBy: '{n} min tarde',
  earlyBy: '{n} min antes',
  onTime: 'a tiempo',
  driverTrips: 'Sus viajes',
  reason: 'Motivo',
  recipient_absent: 'destinatario ausente',
  refused: 'rechazado por el destinatario',
  wrong_address: 'dirección incorrecta',
  unsafe_location: 'lugar inseguro',
  damaged: 'mercancía dañada',
  other: 'otro',
  errBadRequest: 'Datos no válidos',
  errUnauthorized: 'Debes iniciar sesión.',
  errForbidden: 'No tienes permiso para hacer esto.',
  errNotFound: 'No encontrado (quizá ya no existe o está fuera de tu alcance).',
  errConflict: 'No se puede en el estado actual; actualiza e inténtalo de nuevo.',
  errUnprocessable: 'La solicitud no se puede procesar.',
  errTooMany: 'Demasiadas solicitudes; espera un momento.',
  errServer: 'Error del servidor; inténtalo de nuevo en un momento.',
  arrivingTo: 'Llega a tu dirección en',
  promisedFor: 'Prometido para las',
  yourAddress: 'Tu dirección',
  toPickupFirst: 'El repartidor pasa primero a recoger tu pedido.',
};
type Key = keyof typeof es;
const en: Record<Key, string> = {
  ...driverEn,
  title: 'Dispatch console',
  login: 'Log in',
  email: 'Email',
  password: 'Password',
  logout: 'Log out',
  language: 'Language',
  dispatch: 'Dispatch',
  approvals: 'Approvals',
  settings: 'Settings',
  map: 'Map',
  drivers: 'Drivers',
  available: 'Available',
  busy: 'Busy',
  offline: 'Offline',
  board: 'Board',
  filters: 'Filters',
  territory: 'Territory',
  merchant: 'Merchant',
  status: 'Status',
  search: 'Search',
  all: 'All',
  pending: 'Pending',
  assigned: 'Assigned',
  accepted: 'Accepted',
  picked_up: 'Picked up',
  in_transit: 'In transit',
  completed: 'Delivered',
  cancelled: 'Cancelled',
  returning: 'Returning',
  returned: 'Returned',
  failed: 'Failed',
  approved: 'Approved',
  rejected: 'Rejected',
  suspended: 'Suspended',
  trip: 'Trip',
  pickup: 'Pickup',
  dropoff: 'Drop-off',
  driver: 'Driver',
  fee: 'Fee',
  timeline: 'Timeline',
  proofs: 'Proofs',
  tracking: 'Tracking',
  candidates: 'Candidates',
  assign: 'Assign',
  autoAssign: 'Auto-assign',
  cancel: 'Cancel trip',
  cancelReason: 'Cancellation reason',
  close: 'Close',
  distance: 'Distance',
  eta: 'ETA',
  eligible: 'Eligible',
  notEligible: 'Not eligible',
  none: 'None',
  select: 'Select',
  optimize: 'Optimize selected',
  plan: 'Dispatch plan',
  commit: 'Commit plan',
  discard: 'Discard',
  unassigned: 'Unassigned',
  route: 'Route',
  stops: 'stops',
  approve: 'Approve',
  reject: 'Reject',
  merchants: 'Merchants',
  documents: 'Documents',
  paymentReviews: 'Payment reviews',
  nothingPending: 'Nothing pending.',
  save: 'Save',
  saved: 'Saved',
  organization: 'Organization',
  logistics: 'Logistics',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  recipientLink: 'Recipient link',
  issueLink: 'Issue link',
  noTiles: 'Map without tiles (offline)',
  loginFailed: 'Login failed',
  error: 'Error',
  refresh: 'Refresh',
  selected: 'selected',
  activeTrips: 'Active trips',
  minutes: 'min',
  yourDelivery: 'Your delivery',
  deliveryPin: 'Delivery PIN',
  pinHint: 'Give it to the driver only when you receive your order.',
  from: 'From',
  destination: 'Destination',
  updated: 'Updated',
  linkInvalid: 'This tracking link is not valid or has expired.',
  driverOnMap: 'Driver on the map',
  arrivingIn: 'Arriving in',
  skipToContent: 'Skip to content',
  created: 'Created',
  noProofs: 'No proofs',
  require_platform_payment_before_order: 'Require platform payment before the order',
  default_currency: 'Currency',
  timezone: 'Time zone',
  default_country: 'Country',
  support_phone: 'Support phone',
  support_email: 'Support email',
  auto_assign_radius_m: 'Auto-assign radius (m)',
  acceptance_timeout_s: 'Acceptance timeout (s)',
  acceptance_timeout_enabled: 'Acceptance timeout on',
  acceptance_max_offers: 'Maximum offers',
  assignment_strategy: 'Assignment strategy',
  failed_delivery_policy: 'Failed delivery policy',
  geofence_radius_m: 'Geofence radius (m)',
  average_speed_kmh: 'Average speed (km/h)',
  default_delivery_fee: 'Default delivery fee',
  driver_flat_fee: 'Driver flat fee',
  currency: 'Currency',
  sessionExpired: 'Your session has expired. Please log in again.',
  staffOnly: 'This console is for dispatch and administration staff; your account has no access to it.',
  goDriver: 'If you are a driver, use the driver app:',
  goMerchant: 'If you run a merchant, use the merchant page:',
  goCustomer: 'If you are a customer, follow your order in the app or with the tracking link you received.',
  noConnection: 'No connection to the server. Check your connection and try again.',
  streamLimit: 'Too many live tabs open with your user (limit {n}). Close one; retrying in {s} s.',
  streamRetry: 'No live connection; retrying in {s} s.',
  columns: 'Board columns',
  boardHint: 'Scroll the board right or pick a column:',
  trouble: 'Trouble',
  adminDecides: 'Only an administrator can approve or reject; this is what is pending.',
  adminDecidesDocs: 'Only an administrator reviews documents; this is what is pending.',
  nothingToSave: 'Nothing to save.',
  selectedOne: 'selected',
  selectedMany: 'selected',
  assignedOne: 'assigned',
  assignedMany: 'assigned',
  at_capacity: 'at capacity',
  not_available: 'not available',
  rejected_this_trip: 'rejected this trip',
  outside_territory: 'outside the territory',
  current_driver: 'already the driver',
  strategy_nearest: 'Nearest',
  strategy_least_loaded: 'Least loaded',
  policy_return_to_merchant: 'Return to the merchant',
  policy_close: 'Close as failed',
  reissueLink: 'Issue a new link',
  reissueWarn: 'The current link will stop working: whoever received it can no longer follow the delivery with it.',
  reissueConfirm: 'Yes, issue a new one',
  keepLink: 'Keep the current one',
  linkReissued: 'New link issued; the old one no longer works.',
  ago: '{n} ago',
  staleGps: 'GPS not updating',
  gps: 'GPS',
  recipient: 'Recipient',
  promise: 'Promised',
  lateBy: '{n} min late',
  earlyBy: '{n} min early',
  onTime: 'on time',
  driverTrips: 'His trips',
  reason: 'Reason',
  recipient_absent: 'recipient absent',
  refused: 'refused by the recipient',
  wrong_address: 'wrong address',
  unsafe_location: 'unsafe location',
  damaged: 'goods damaged',
  other: 'other',
  errBadRequest: 'Invalid data',
  errUnauthorized: 'Please log in.',
  errForbidden: 'You are not allowed to do this.',
  errNotFound: 'Not found (it may no longer exist or be outside your scope).',
  errConflict: 'Not possible in the current state; refresh and try again.',
  errUnprocessable: 'The request cannot be processed.',
  errTooMany: 'Too many requests; wait a moment.',
  errServer: 'Server error; try again in a moment.',
  arrivingTo: 'Arrives at your address in',
  promisedFor: 'Promised for',
  yourAddress: 'Your address',
  toPickupFirst: 'The driver picks up your order first.',
};

export type Lang = 'es' | 'en';
const dictionaries: Record<Lang, Record<Key, string>> = { es, en };

function initial(): Lang {
  const saved = localStorage.getItem('lang');
  if (saved === 'es' || saved === 'en') return saved;
  return navigator.language?.toLowerCase().startsWith('en') ? 'en' : 'es';
}

let lang: Lang = initial();
document.documentElement.lang = lang;

export const getLang = () => lang;
export function setLang(l: Lang): void {
  lang = l;
  localStorage.setItem('lang', l);
  document.documentElement.lang = l;
}

export function t(key: Key): string {
  return dictionaries[lang][key];
}

/** A label for an API value (states) when there is one, else the value itself. */
export function label(value: string): string {
  return (dictionaries[lang] as Record<string, string>)[value] ?? value.replace(/_/g, ' ');
}

export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(lang === 'es' ? 'es-BO' : 'en-US', { dateStyle: 'short', timeStyle: 'short' });
}

export function fmtEta(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return `${Math.max(1, Math.round(seconds / 60))} ${t('minutes')}`;
}

export function fmtKm(m: number | null | undefined): string {
  if (m === null || m === undefined) return '—';
  return m < 1000 ? `${Math.round(m)} m` : `${(m / 1000).toFixed(1)} km`;
}

/** A key with {placeholders} filled. */
export function tf(key: Key, values: Record<string, string | number>): string {
  return t(key).replace(/\{(\w+)\}/g, (_, k: string) => String(values[k] ?? ''));
}

/** "1 seleccionado", "5 asignados": the count with the word in the page language's plural form. */
export function count(n: number, one: Key, many: Key): string {
  return `${n} ${new Intl.PluralRules(lang).select(n) === 'one' ? t(one) : t(many)}`;
}

/** "hace 11 min" / "11 min ago" for a past time; '—' without one. */
export function fmtAge(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  const n = s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min` : s < 172_800 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 86_400)} d`;
  return tf('ago', { n });
}

/** Lateness against a promise: "12 min tarde", "3 min antes", "a tiempo" (within a minute). */
export function fmtLate(lateBySeconds: number | null | undefined): string {
  if (lateBySeconds === null || lateBySeconds === undefined) return '—';
  const m = Math.round(lateBySeconds / 60);
  return m > 0 ? tf('lateBy', { n: m }) : m < 0 ? tf('earlyBy', { n: -m }) : t('onTime');
}

export function fmtClock(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleTimeString(lang === 'es' ? 'es-BO' : 'en-US', { hour: '2-digit', minute: '2-digit' });
}

/** Server error codes (problem+json `code`) in the page's language; other codes by their HTTP status. */
const ERRORS: Record<Lang, Record<string, string>> = {
  es: {
    INVALID_CREDENTIALS: 'Correo o contraseña incorrectos.',
    LOGIN_THROTTLED: 'Demasiados intentos de inicio de sesión; espera unos minutos.',
    RATE_LIMITED: 'Demasiadas solicitudes; espera un momento.',
    SESSION_REVOKED: 'Tu sesión se cerró.',
    INVALID_REFRESH_TOKEN: 'Tu sesión ha caducado. Vuelve a iniciar sesión.',
    REFRESH_TOKEN_REUSED: 'Tu sesión se cerró por seguridad. Vuelve a iniciar sesión.',
    DRIVER_AT_CAPACITY: 'El repartidor no tiene capacidad libre.',
    DRIVER_NOT_AVAILABLE: 'El repartidor no está disponible.',
    DRIVER_NOT_APPROVED: 'El repartidor no está aprobado.',
    DRIVER_REJECTED_TRIP: 'El repartidor ya rechazó este viaje.',
    DRIVER_OUTSIDE_TERRITORY: 'El repartidor no trabaja en el territorio del viaje.',
    ALREADY_ASSIGNED: 'El viaje ya tiene repartidor.',
    INVALID_TRANSITION: 'El viaje ya cambió de estado; actualiza e inténtalo de nuevo.',
    INVALID_STATE: 'No se puede en el estado actual del viaje.',
    NO_ELIGIBLE_DRIVER: 'No hay ningún repartidor apto cerca.',
    NO_DRIVERS: 'No hay repartidores disponibles.',
    NO_DRIVER_IN_TERRITORY: 'No hay repartidores disponibles en el territorio.',
    PLAN_STALE: 'El plan quedó desactualizado (algo cambió); vuelve a optimizar.',
    OPTIMIZER_BUSY: 'El optimizador está ocupado; inténtalo en un momento.',
    SELECTION_REQUIRED: 'Selecciona al menos un viaje.',
    PIN_LOCKED: 'El PIN está bloqueado tras varios intentos fallidos.',
    AVAILABILITY_LOCKED: 'La disponibilidad del repartidor está bloqueada.',
    CURRENCY_IN_USE: 'La moneda ya no se puede cambiar: hay importes registrados en ella.',
    LAST_ADMINISTRATOR: 'Es el último administrador; no se puede quitar.',
    PERMISSION_DENIED: 'No tienes permiso para hacer esto.',
    FORBIDDEN: 'No tienes permiso para hacer esto.',
    SUBADMIN_INACTIVE: 'Tu cuenta de subadministrador está inactiva.',
    RECIPIENT_HAS_ACCOUNT: 'El destinatario tiene cuenta: sigue el pedido en la app.',
    STREAM_LIMIT_PER_USER: 'Demasiadas pestañas en vivo abiertas con tu usuario.',
    TOO_MANY_STREAMS: 'El servidor tiene demasiadas conexiones en vivo; reintentando.',
    NOT_FOUND: 'No encontrado (quizá ya no existe o está fuera de tu alcance).',
  },
  en: {},
};

/** What a failed call says, in the page's language: the server's code mapped, a network failure as "no connection". */
export function errorText(e: unknown): string {
  const p = (e as { problem?: { status?: number; code?: string; detail?: string; title?: string; errors?: { field?: string }[] } } | null)?.problem;
  if (!p) return e instanceof TypeError ? t('noConnection') : e instanceof Error ? e.message : String(e);
  const mapped = p.code ? ERRORS[lang][p.code] : undefined;
  if (mapped) return mapped;
  if (lang === 'en' && (p.detail || p.title)) return (p.detail ?? p.title)!;
  const s = p.status ?? 0;
  const generic =
    s === 400 ? t('errBadRequest') : s === 401 ? t('errUnauthorized') : s === 403 ? t('errForbidden') : s === 404 ? t('errNotFound') : s === 409 ? t('errConflict') : s === 422 ? t('errUnprocessable') : s === 429 ? t('errTooMany') : t('errServer');
  const fields = (p.errors ?? []).map((x) => x.field?.replace(/^\/+/, '')).filter((f): f is string => !!f);
  return `${generic}${fields.length ? `: ${[...new Set(fields)].map(label).join(', ')}` : ''} (${p.code ?? s})`;
}
