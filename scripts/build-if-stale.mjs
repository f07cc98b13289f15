/* global process, console */
// `npm run build` (--always) and `npm start` (prestart): compiles src/ to dist/ when dist/ is missing or older than a source file,
// so `npm install && npm start` works on a fresh clone without paying tsc on every start.
// Stale = any src/**/*.ts (tests excluded), tsconfig*.json or package.json newer than dist/.build-stamp.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist/.build-stamp');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

const mtime = (p) => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
};

const sources = Math.max(newest(path.join(root, 'src')), ...['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => mtime(path.join(root, f))));
const built = mtime(stamp);
const always = process.argv.includes('--always'); // `npm run build`
if (!always && built && built >= sources) process.exit(0);

if (!always) console.log(built ? 'dist/ is older than src/: building' : 'no build in dist/: building');
const started = Date.now();
const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  console.error('build failed (tsc -p tsconfig.build.json); `npm run dev` runs the sources with tsx');
  process.exit(r.status ?? 1);
}
writeFileSync(stamp, `${new Date(started).toISOString()}\n`);
// Stamped with the time the build started: a source saved during the build makes the next start rebuild.
utimesSync(stamp, started / 1000, started / 1000);
console.log(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
