/** Reading and writing the spreadsheets: CSV (RFC 4180, comma, semicolon or tab) and XLSX through exceljs. */
import zlib from 'node:zlib';
import type ExcelJS from 'exceljs';
import { AppError } from '../../../platform/errors.js';
import { lazyModule } from '../../../platform/lazy.js';
import type { FileFormat } from '../schemas.js';

/** exceljs is loaded by the first spreadsheet, not at start (platform/lazy.ts). */
const loadExcel = lazyModule('exceljs', async () => (await import('exceljs')).default);

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const CSV_TYPE = 'text/csv';

/** The most data rows of one file (beyond: 413 IMPORT_TOO_MANY_ROWS) and the largest file accepted (beyond: 413). */
export const MAX_ROWS = 5000;
export const MAX_FILE_BYTES = 5 * 1024 * 1024;
/**
 * The most an XLSX may hold once unzipped, all its parts together (beyond: 413 IMPORT_UNZIPPED_TOO_LARGE). 5,000 rows of
 * the widest template take a few tens of MiB of sheet XML; a zip bomb (a small file whose sheet expands to hundreds
 * of MiB) is refused before any part is inflated into memory.
 */
export const MAX_UNZIPPED_BYTES = 64 * 1024 * 1024;

export interface Sheet {
  header: string[];
  /** Data rows with their spreadsheet row number (the header is row 1); blank rows are left out. */
  rows: { row: number; cells: string[] }[];
}

const tooMany = () =>
  new AppError(413, 'IMPORT_TOO_MANY_ROWS', `A file may hold at most ${MAX_ROWS} data rows; split it`, [
    { field: 'file', message: `more than ${MAX_ROWS} rows` },
  ]);

const blank = (cells: string[]) => cells.every((c) => c.trim() === '');

/** The format of an upload from its Content-Type, checked against the bytes (an XLSX is a zip file). */
export function formatOf(mediaType: string, body: Buffer): FileFormat {
  const isZip = body.length >= 4 && body.readUInt32LE(0) === 0x04034b50;
  if (mediaType === XLSX_TYPE) {
    if (!isZip) throw new AppError(415, 'SIGNATURE_MISMATCH', 'The body is not an XLSX workbook');
    return 'xlsx';
  }
  if (isZip || body.includes(0)) throw new AppError(415, 'SIGNATURE_MISMATCH', 'The body is not a text CSV file');
  return 'csv';
}

export async function readSheet(format: FileFormat, body: Buffer): Promise<Sheet> {
  const sheet = format === 'csv' ? readCsv(body) : await readXlsx(body);
  if (!sheet.header.length || blank(sheet.header))
    throw new AppError(422, 'IMPORT_EMPTY', 'The file has no header row', [{ field: 'file', message: 'empty' }]);
  if (!sheet.rows.length) throw new AppError(422, 'IMPORT_EMPTY', 'The file has no data rows', [{ field: 'file', message: 'no rows' }]);
  return sheet;
}

/** RFC 4180 with the delimiter of the header line (Excel in Spanish writes semicolons); a UTF-8 BOM is skipped. */
export function readCsv(body: Buffer): Sheet {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const count = (ch: string) => firstLine.split(ch).length - 1;
  const delimiter = [',', ';', '\t'].reduce((best, ch) => (count(ch) > count(best) ? ch : best), ',');
  const records: { row: number; cells: string[] }[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let i = 0;
  const endRecord = () => {
    cells.push(cell);
    records.push({ row: records.length + 1, cells });
    if (records.length > MAX_ROWS + 1 && !blank(cells)) throw tooMany();
    cells = [];
    cell = '';
  };
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else cell += ch;
      i++;
      continue;
    }
    if (ch === '"' && cell === '') quoted = true;
    else if (ch === delimiter) {
      cells.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      endRecord();
      if (ch === '\r' && text[i + 1] === '\n') i++;
    } else cell += ch;
    i++;
  }
  if (quoted)
    throw new AppError(422, 'IMPORT_UNREADABLE', 'The CSV file ends inside a quoted field', [{ field: 'file', message: 'unclosed quote' }]);
  if (cell !== '' || cells.length) endRecord();
  const [header, ...rest] = records;
  const rows = rest.filter((r) => !blank(r.cells));
  if (rows.length > MAX_ROWS) throw tooMany();
  return { header: header?.cells ?? [], rows };
}

/** A cell as text: numbers as typed, dates in ISO 8601, formulas by their result, rich text by its characters. */
function cellText(v: ExcelJS.CellValue): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') {
    if ('richText' in v) return v.richText.map((r) => r.text).join('');
    if ('result' in v) return cellText((v.result ?? null) as ExcelJS.CellValue);
    if ('text' in v) return String(v.text);
    if ('error' in v) return '';
    return '';
  }
  return String(v);
}

const unreadable = (why: string) =>
  new AppError(422, 'IMPORT_UNREADABLE', 'The XLSX workbook cannot be read', [{ field: 'file', message: why }]);
const unzippedTooLarge = () =>
  new AppError(413, 'IMPORT_UNZIPPED_TOO_LARGE', `An XLSX workbook may hold at most ${MAX_UNZIPPED_BYTES / (1024 * 1024)} MiB unzipped`, [
    { field: 'file', message: 'too large once unzipped' },
  ]);

/** The bytes a raw deflate stream inflates to, counted without keeping them, stopping once beyond `limit`. */
function inflatedSize(data: Buffer, limit: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const z = zlib.createInflateRaw();
    let n = 0;
    z.on('data', (chunk: Buffer) => {
      n += chunk.length;
      if (n > limit) {
        z.destroy();
        resolve(n);
      }
    });
    z.on('end', () => resolve(n));
    z.on('error', () => reject(unreadable('a damaged part')));
    z.end(data);
  });
}

/**
 * Guards the unzipping: the sizes the zip's central directory declares must add up to at most MAX_UNZIPPED_BYTES,
 * and each part must inflate to no more than it declares (a forged directory cannot smuggle a bomb past the sum).
 * The parts are inflated here only to count them, a chunk at a time.
 */
export async function checkUnzippedSize(body: Buffer): Promise<void> {
  // End of central directory: 22 bytes plus a comment of up to 64 KiB, at the end of the file.
  let eocd = -1;
  for (let i = body.length - 22; i >= Math.max(0, body.length - 22 - 0xffff); i--) {
    if (body.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw unreadable('not a zip file');
  const entries = body.readUInt16LE(eocd + 10);
  let at = body.readUInt32LE(eocd + 16);
  const parts: { method: number; compressed: number; size: number; local: number }[] = [];
  let declared = 0;
  for (let i = 0; i < entries; i++) {
    if (at + 46 > body.length || body.readUInt32LE(at) !== 0x02014b50) throw unreadable('a damaged zip directory');
    const part = {
      method: body.readUInt16LE(at + 10),
      compressed: body.readUInt32LE(at + 20),
      size: body.readUInt32LE(at + 24),
      local: body.readUInt32LE(at + 42),
    };
    declared += part.size;
    if (declared > MAX_UNZIPPED_BYTES) throw unzippedTooLarge();
    parts.push(part);
    at += 46 + body.readUInt16LE(at + 28) + body.readUInt16LE(at + 30) + body.readUInt16LE(at + 32);
  }
  for (const p of parts) {
    if (p.local + 30 > body.length || body.readUInt32LE(p.local) !== 0x04034b50) throw unreadable('a damaged zip part');
    const start = p.local + 30 + body.readUInt16LE(p.local + 26) + body.readUInt16LE(p.local + 28);
    const data = body.subarray(start, start + p.compressed);
    if (data.length !== p.compressed) throw unreadable('a truncated zip part');
    const size = p.method === 0 ? data.length : p.method === 8 ? await inflatedSize(data, p.size) : -1;
    if (size < 0) throw unreadable('an unsupported compression');
    if (size > p.size) throw unzippedTooLarge();
  }
}

async function readXlsx(body: Buffer): Promise<Sheet> {
  await checkUnzippedSize(body);
  const { Workbook } = await loadExcel();
  const wb = new Workbook();
  try {
    await wb.xlsx.load(body as unknown as ArrayBuffer);
  } catch {
    throw unreadable('not a readable workbook');
  }
  const ws = wb.worksheets[0];
  if (!ws) return { header: [], rows: [] };
  if (ws.actualRowCount > MAX_ROWS + 1) throw tooMany();
  const width = ws.getRow(1).cellCount;
  const header: string[] = [];
  for (let c = 1; c <= width; c++) header.push(cellText(ws.getRow(1).getCell(c).value));
  const rows: Sheet['rows'] = [];
  ws.eachRow((r, n) => {
    if (n === 1) return;
    const cells: string[] = [];
    for (let c = 1; c <= width; c++) cells.push(cellText(r.getCell(c).value));
    if (!blank(cells)) rows.push({ row: n, cells });
  });
  return { header, rows };
}

/** A cell a spreadsheet would run as a formula is written with a leading apostrophe (CSV injection). */
const safe = (v: string) => (/^[=+\-@\t\r]/.test(v) && !/^-?\d+(\.\d+)?$/.test(v) ? `'${v}` : v);
const csvCell = (v: string) => {
  const s = safe(v);
  return /[",;\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** A table as a file: CSV (UTF-8 with a BOM, so Excel reads accents) or an XLSX workbook of one sheet. */
export async function writeTable(
  format: FileFormat,
  sheetName: string,
  header: string[],
  rows: (string | number | null)[][],
): Promise<Buffer> {
  if (format === 'csv') {
    const lines = [header, ...rows].map((r) => r.map((v) => csvCell(v === null ? '' : String(v))).join(','));
    return Buffer.from(`\ufeff${lines.join('\r\n')}\r\n`, 'utf8');
  }
  const { Workbook } = await loadExcel();
  const wb = new Workbook();
  wb.creator = 'delivery-api';
  const ws = wb.addWorksheet(sheetName);
  ws.addRow(header).font = { bold: true };
  for (const r of rows) ws.addRow(r);
  ws.columns.forEach((c, i) => (c.width = Math.min(Math.max(header[i]?.length ?? 10, 12), 40)));
  return Buffer.from(await wb.xlsx.writeBuffer());
}
