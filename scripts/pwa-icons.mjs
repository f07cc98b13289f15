/* global process, Buffer */
// Writes the installable pages' icons (web/static/pwa/icons/<name>-<size>.png): a parcel on the page's colour, drawn
// pixel by pixel (no image library needed). `node scripts/pwa-icons.mjs driver 1d4ed8`; maskable: the
// drawing stays inside the central 80 % safe zone.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';

const [name = 'driver', hex = '1d4ed8'] = process.argv.slice(2);
const bg = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type), data]);
  const c = Buffer.alloc(4);
  c.writeUInt32BE(crc(td));
  return Buffer.concat([len, td, c]);
};

function png(size) {
  const rows = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 3);
    for (let x = 0; x < size; x++) {
      const u = x / size;
      const v = y / size;
      // A parcel: a white box with a band across it, centred, within the safe zone.
      const inBox = u > 0.28 && u < 0.72 && v > 0.32 && v < 0.7;
      const band = inBox && u > 0.46 && u < 0.54;
      const lid = u > 0.25 && u < 0.75 && v > 0.28 && v < 0.36;
      const c = band ? bg : inBox || lid ? [255, 255, 255] : bg;
      row.set(c, 1 + x * 3);
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const dir = path.resolve(import.meta.dirname, '../web/static/pwa/icons');
for (const size of [192, 512]) writeFileSync(path.join(dir, `${name}-${size}.png`), png(size));
