/**
 * The installable-page pieces shared by the driver and merchant apps: the service worker (web/static/pwa/sw.js,
 * served at /<page>/sw.js), the network state, the screen wake lock and the install prompt.
 */

/** Registers the page's service worker for its scope (/<page>/); resolves when it controls the page (or never, without support). */
export async function registerServiceWorker(page: string): Promise<ServiceWorkerRegistration | null> {
  if (!('serviceWorker' in navigator)) return null;
  try {
    return await navigator.serviceWorker.register(`/${page}/sw.js`, { scope: `/${page}/` });
  } catch {
    return null;
  }
}

/** Calls `fn(online)` now and on every change of the network state; returns the unsubscribe. */
export function onNetwork(fn: (online: boolean) => void): () => void {
  const on = () => fn(true);
  const off = () => fn(false);
  addEventListener('online', on);
  addEventListener('offline', off);
  fn(navigator.onLine);
  return () => {
    removeEventListener('online', on);
    removeEventListener('offline', off);
  };
}

/**
 * Keeps the screen on while `wanted()` (an active trip): requested when wanted, re-requested when the page comes
 * back to the foreground (the browser drops the lock when it hides), released when not wanted; `onChange` hears when
 * the lock is taken and let go. No-op without support.
 */
export function screenWakeLock(onChange: (held: boolean) => void = () => undefined) {
  let lock: WakeLockSentinel | null = null;
  let wanted = false;
  const acquire = async () => {
    if (!wanted || lock || !('wakeLock' in navigator) || document.visibilityState !== 'visible') return;
    try {
      lock = await navigator.wakeLock.request('screen');
      onChange(true);
      lock.addEventListener('release', () => {
        lock = null;
        onChange(false);
      });
      // No longer wanted while the request was under way.
      if (!wanted) void lock.release().catch(() => undefined);
    } catch {
      lock = null;
    }
  };
  document.addEventListener('visibilitychange', () => void acquire());
  return {
    set(on: boolean) {
      wanted = on;
      if (on) void acquire();
      else if (lock) void lock.release().catch(() => undefined);
    },
    held: () => lock !== null,
  };
}

interface InstallPrompt extends Event {
  prompt(): Promise<void>;
}

/** The browser's install offer, kept to be shown from a button of the page (`onAvailable` when there is one). */
export function installPrompt(onAvailable: (install: () => Promise<void>) => void): void {
  addEventListener('beforeinstallprompt', (e) => {
    e.preventDefault();
    const ev = e as InstallPrompt;
    onAvailable(() => ev.prompt());
  });
}

/** Battery low and not charging (Battery Status API where the browser has it; false otherwise). */
export async function batteryLow(threshold = 0.2): Promise<boolean> {
  const nav = navigator as Navigator & { getBattery?: () => Promise<{ level: number; charging: boolean }> };
  if (!nav.getBattery) return false;
  try {
    const b = await nav.getBattery();
    return !b.charging && b.level < threshold;
  } catch {
    return false;
  }
}

/**
 * A photo from the phone's camera, made smaller in the browser before it is stored or uploaded: the longest side at
 * most `max` pixels, JPEG. A photo too large for the upload limit is thus resized, never refused.
 */
export async function resizeImage(file: Blob, max = 1600, quality = 0.8): Promise<Blob> {
  const bitmap = await createImageBitmap(file);
  const scale = Math.min(1, max / Math.max(bitmap.width, bitmap.height));
  const w = Math.max(1, Math.round(bitmap.width * scale));
  const h = Math.max(1, Math.round(bitmap.height * scale));
  const canvas = document.createElement('canvas');
  canvas.width = w;
  canvas.height = h;
  canvas.getContext('2d')!.drawImage(bitmap, 0, 0, w, h);
  bitmap.close();
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('toBlob failed'))), 'image/jpeg', quality),
  );
}
