/* global process, console */
// `npm run build` (--always) and `npm start` (prestart): compiles src/ to dist/ when dist/ is missing or older than a source file,
// and builds the web pages (web/ → dist/web with Vite) the same way, so `npm install && npm start` works on a fresh clone
// without paying tsc or Vite on every start.
// Stale = any src/**/*.ts (tests excluded), data asset, tsconfig*.json or package.json newer than dist/.build-stamp;
// for the pages: any web/** file or package.json newer than dist/web/.build-stamp. `--web` builds only the pages.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist/.build-stamp');

function newest(dir, wanted = (name) => name.endsWith('.ts') && !name.endsWith('.test.ts')) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p, wanted));
    else if (wanted(e.name)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

/** Data files the sources read beside themselves at run time (e.g. identity's common-passwords.txt): copied into dist/. */
const isAsset = (name) => name.endsWith('.txt');

function copyAssets(from, to) {
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const p = path.join(from, e.name);
    if (e.isDirectory()) copyAssets(p, path.join(to, e.name));
    else if (isAsset(e.name)) {
      mkdirSync(to, { recursive: true });
      copyFileSync(p, path.join(to, e.name));
    }
  }
}

const mtime = (p) => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
};

const always = process.argv.includes('--always'); // `npm run build`
const webOnly = process.argv.includes('--web');

/** The console and tracking pages: Vite builds web/ into dist/web (served by src/platform/web.ts). */
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** One web build at a time (test files build in parallel, and Vite empties dist/web first): a lock directory. */
function withWebLock(fn) {
  const lock = path.join(root, 'dist/.web-build-lock');
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than 5 minutes belongs to a build that died.
      if (Date.now() - mtime(lock) > 300_000 || waited > 300_000) rmSync(lock, { recursive: true, force: true });
      else sleep(200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function buildWeb() {
  withWebLock(buildWebLocked);
}

function buildWebLocked() {
  const webStamp = path.join(root, 'dist/web/.build-stamp');
  const webSources = Math.max(
    newest(path.join(root, 'web'), () => true),
    mtime(path.join(root, 'package.json')),
  );
  const webBuilt = mtime(webStamp);
  // Checked under the lock: a build that just finished in another process counts.
  if (!always && webBuilt && webBuilt >= webSources) return;
  if (!always) console.log(webBuilt ? 'dist/web is older than web/: building the pages' : 'no build in dist/web: building the pages');
  const started = Date.now();
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(root, 'web/vite.config.ts')],
    { stdio: 'inherit', cwd: root },
  );
  if (r.status !== 0) {
    console.error('web build failed (vite build --config web/vite.config.ts)');
    process.exitCode = r.status ?? 1;
    return;
  }
  writeFileSync(webStamp, `${new Date(started).toISOString()}\n`);
  utimesSync(webStamp, started / 1000, started / 1000);
  console.log(`built dist/web in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (webOnly) {
  buildWeb();
  process.exit(process.exitCode ?? 0);
}

const sources = Math.max(
  newest(path.join(root, 'src'), (name) => (name.endsWith('.ts') && !name.endsWith('.test.ts')) || isAsset(name)),
  ...['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => mtime(path.join(root, f))),
);
const built = mtime(stamp);
if (!always && built && built >= sources) {
  buildWeb();
  process.exit(process.exitCode ?? 0);
}

if (!always) console.log(built ? 'dist/ is older than src/: building' : 'no build in dist/: building');
const started = Date.now();
const r = spawnSync(process.execPath, [path.join(root, 'node_modules/tsgo/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (r.status !== 0) {
  console.error('build failed (tsc -p tsconfig.build.json); `npm run dev` runs the sources with tsx');
  process.exit(r.status ?? 1);
}
copyAssets(path.join(root, 'src'), path.join(root, 'dist'));
writeFileSync(stamp, `${new Date(started).toISOString()}\n`);
// Stamped with the time the build started: a source saved during the build makes the next start rebuild.
utimesSync(stamp, started / 1000, started / 1000);
console.log(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
buildWeb();
