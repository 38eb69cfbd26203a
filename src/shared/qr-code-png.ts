// The QR code PNG of an LPA string: the image attached to the confirmation email and the one
// GET /v1/esims/{iccid}/qr.png answers, drawn the same way so both scan alike.
//
// The `qrcode` package makes the symbol (error correction; the best of the eight masks is chosen
// as it would, faster, in qr-symbol.ts); the PNG is written here, as a 1-bit grayscale image. Both were most of a confirmation email's CPU, on
// the event loop that also serves requests (bench/README.md, purchase profile):
// - qrcode's own PNG path paints every pixel as four RGBA bytes in JavaScript and hands 400 KB to
//   pngjs per 320-pixel image. Here: one bit per pixel, each distinct row drawn once from its dark
//   modules' bytes (a QR row repeats for a whole module: the repeats are PNG's "Up" filter, all
//   zeros), one zlib call; qrcode's own scale and quiet-zone arithmetic, so for one symbol the
//   picture is the same pixel for pixel (test/shared.qr-code-png.test.ts).
// - Its automatic segmentation searches the cheapest mix of alphanumeric and byte segments, four
//   times the cost of the rest of the symbol, to save a few modules on a string this short. The
//   whole string is one byte-mode segment instead: every reader decodes it, and an LPA string of
//   the usual length stays at the same QR version.
import { crc32, deflateSync } from "node:zlib";
import { qrSymbol } from "./qr-symbol.ts";

// SGP.22 activation codes are short (an address and a matching ID); a longer string means bad
// data, and the QR code would become too dense for a phone camera to read from a screen.
export const LPA_MAX_LENGTH = 512;

/** The standard quiet zone, in modules. */
const MARGIN_MODULES = 4;
/** qrcode's pixels per module when the width asked for is smaller than the symbol. */
const FALLBACK_SCALE = 4;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/** A 1-bit grayscale PNG (0 black, 1 white) of `side` x `side` pixels from its raw filtered rows. */
function grayscalePng(side: number, rows: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // grayscale; compression, filter and interlace methods 0
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk("IHDR", header),
    // zlib's fastest level: its matches already take a whole repeated row (a module is `scale`
    // rows); the default level's search cost 2.5 times the CPU (~50 against ~20 µs for a 320-pixel
    // code, on every confirmation email) to make 776 bytes into 595.
    chunk("IDAT", deflateSync(rows, { level: 1 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** How a symbol of `size` modules is drawn `width_px` wide: qrcode's own arithmetic. */
type Geometry = {
  side: number;
  margin_px: number;
  scale: number;
  row_bytes: number;
  /** For each module column, the bytes of a pixel row its pixels fall in, and their bits there. */
  darkens: Array<Array<[number, number]>>;
};

/** Geometries kept: one per symbol size and width asked for (the email's is one; the API takes 128-1024). */
const MAX_GEOMETRIES = 64;
const geometries = new Map<string, Geometry>();

function geometryOf(size: number, width_px: number): Geometry {
  const key = `${size}:${width_px}`;
  const known = geometries.get(key);
  if (known !== undefined) return known;
  const modules = size + MARGIN_MODULES * 2;
  const scale = width_px >= modules ? width_px / modules : FALLBACK_SCALE;
  const side = Math.floor(modules * scale);
  const margin_px = MARGIN_MODULES * scale;
  const row_bytes = 1 + Math.ceil(side / 8); // the filter type, then the bits
  const columns = Array.from({ length: size }, () => new Map<number, number>());
  for (let x = 0; x < side; x++) {
    if (x < margin_px || x >= side - margin_px) continue;
    const bytes = columns[Math.floor((x - margin_px) / scale)]!;
    const at = 1 + (x >> 3);
    bytes.set(at, (bytes.get(at) ?? 0) | (0x80 >> (x & 7)));
  }
  const geometry = { side, margin_px, scale, row_bytes, darkens: columns.map((bytes) => [...bytes]) };
  if (geometries.size >= MAX_GEOMETRIES) geometries.clear();
  geometries.set(key, geometry);
  return geometry;
}

/** The QR code of `lpa` as a PNG `width_px` pixels square. */
export async function qrCodePng(lpa: string, width_px: number): Promise<Buffer> {
  if (lpa.length > LPA_MAX_LENGTH) throw new Error(`LPA string longer than ${LPA_MAX_LENGTH} characters`);
  if (!Number.isInteger(width_px) || width_px < 64 || width_px > 2048) {
    throw new Error(`qrCodePng: width ${width_px} outside 64-2048 pixels`);
  }
  // Error correction M and the standard 4-module quiet zone: reliable when scanned off a screen.
  const { size, data } = qrSymbol(Buffer.from(lpa, "utf8"), "M");
  const { side, margin_px, scale, row_bytes, darkens } = geometryOf(size, width_px);
  // A pixel row repeats the one above it while it shows the same module row: filter type 2 (Up)
  // then makes it all zeros after its filter byte (the buffer's own), so each distinct row is
  // drawn and copied once, and zlib reads long runs of zeros.
  const rows = Buffer.alloc(row_bytes * side);
  const drawn = Buffer.alloc(row_bytes);
  let last_module_row = Number.NaN;
  for (let y = 0; y < side; y++) {
    const module_row = y >= margin_px && y < side - margin_px ? Math.floor((y - margin_px) / scale) : -1;
    if (module_row === last_module_row) {
      rows[y * row_bytes] = 2;
      continue;
    }
    last_module_row = module_row;
    drawn.fill(0xff, 1);
    drawn[0] = 0;
    if (module_row >= 0) {
      for (let col = 0; col < size; col++) {
        if (data[module_row * size + col] === 0) continue;
        for (const [at, bits] of darkens[col]!) drawn[at]! &= ~bits;
      }
    }
    rows.set(drawn, y * row_bytes);
  }
  return grayscalePng(side, rows);
}
