import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { t } from './i18n';

/**
 * Leaflet on a canvas renderer (thousands of circle markers draw as one canvas, no DOM node each), with
 * the tile server the page was served with (<meta name="map-tiles">, MAP_TILE_URL on the server). Without a
 * tile URL, or when tiles fail to load (offline), the map stays usable on a plain background.
 */
export interface MapOptions {
  center?: [number, number];
  zoom?: number;
}

export type Lonlat = [number, number];

/**
 * Leaflet 1.9's canvas renderer can run a redraw after its canvas was destroyed (a map removed between a redraw
 * being queued and run: "Cannot read properties of undefined (reading 'clearRect')", seen once in CI's browser
 * test, Leaflet/Leaflet#6030 was the same race). A renderer without its drawing context has nothing to draw:
 * the redraw is dropped.
 */
type CanvasInternals = { _ctx?: CanvasRenderingContext2D; _redrawRequest?: number | null; _redraw(): void };
const canvasProto = L.Canvas.prototype as unknown as CanvasInternals;
const leafletRedraw = canvasProto._redraw;
canvasProto._redraw = function (this: CanvasInternals) {
  if (!this._ctx) {
    this._redrawRequest = null;
    return;
  }
  leafletRedraw.call(this);
};

export function tileSettings(): { url: string; attribution: string } {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="map-tiles"]');
  return { url: meta?.content ?? '', attribution: meta?.dataset.attribution ?? '' };
}

export function createMap(el: HTMLElement, opts: MapOptions = {}): L.Map {
  const map = L.map(el, { preferCanvas: true, zoomControl: true, attributionControl: true, keyboard: true }).setView(
    opts.center ?? [-16.5, -68.13],
    opts.zoom ?? 13,
  );
  el.setAttribute('role', 'application');
  const { url, attribution } = tileSettings();
  const plain = () => {
    el.classList.add('no-tiles');
    el.dataset.tiles = 'none';
    map.attributionControl.setPrefix(t('noTiles'));
  };
  if (!url) plain();
  else {
    const layer = L.tileLayer(url, { attribution, maxZoom: 19, crossOrigin: false }).addTo(map);
    let loaded = 0;
    let failed = 0;
    layer.on('tileload', () => {
      loaded++;
      el.dataset.tiles = 'loaded';
    });
    layer.on('tileerror', () => {
      if (++failed >= 4 && loaded === 0) {
        map.removeLayer(layer);
        plain();
      }
    });
  }
  return map;
}

/**
 * Removes a map safely. Leaflet 1.9 ends a zoom animation on a 250 ms timer; a map removed before that timer
 * fires reads its removed pane ("Cannot read properties of undefined (reading '_leaflet_pos')"). Finishing the
 * animation first, while the pane still exists, makes the timer a no-op.
 */
export function disposeMap(map: L.Map | null | undefined): void {
  if (!map) return;
  const m = map as L.Map & { _animatingZoom?: boolean; _onZoomTransitionEnd?: () => void };
  map.stop();
  if (m._animatingZoom) m._onZoomTransitionEnd?.();
  map.remove();
}

export const toLatLng = (p: { coordinates: number[] } | null | undefined): L.LatLngTuple | null =>
  p && p.coordinates.length >= 2 ? [p.coordinates[1]!, p.coordinates[0]!] : null;

export const COLORS = {
  available: '#1a7f37',
  busy: '#c2410c',
  offline: '#6b7280',
  pickup: '#1d4ed8',
  dropoff: '#7e22ce',
  /** A failed delivery (returning, failed, returned). */
  trouble: '#b91c1c',
} as const;

/** Circle markers keyed by id, updated in place (moving a marker redraws only the canvas, no DOM churn). */
export class MarkerSet {
  private markers = new Map<string, L.CircleMarker>();
  private group: L.LayerGroup;
  constructor(
    private map: L.Map,
    private radius: number,
  ) {
    this.group = L.layerGroup().addTo(map);
  }
  get size(): number {
    return this.markers.size;
  }
  upsert(id: string, at: L.LatLngTuple, color: string, tooltip: string, onClick?: () => void): void {
    const m = this.markers.get(id);
    if (m) {
      m.setLatLng(at);
      if (m.options.color !== color) m.setStyle({ color, fillColor: color });
      m.setTooltipContent(tooltip);
      return;
    }
    const marker = L.circleMarker(at, { radius: this.radius, color, fillColor: color, fillOpacity: 0.8, weight: 2 }).bindTooltip(tooltip);
    if (onClick) marker.on('click', onClick);
    marker.addTo(this.group);
    this.markers.set(id, marker);
  }
  remove(id: string): void {
    const m = this.markers.get(id);
    if (m) {
      this.group.removeLayer(m);
      this.markers.delete(id);
    }
  }
  /** Keeps only these ids. */
  retain(ids: Set<string>): void {
    for (const id of [...this.markers.keys()]) if (!ids.has(id)) this.remove(id);
  }
  get(id: string): L.CircleMarker | undefined {
    return this.markers.get(id);
  }
}
