/** Spanish (default: the users are in Spanish-speaking markets) and English labels. */
const es = {
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
};
type Key = keyof typeof es;
const en: Record<Key, string> = {
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
