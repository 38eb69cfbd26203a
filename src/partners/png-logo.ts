// A partner's logo (PUT /v1/profile/branding): a PNG checked whole before it is stored, never
// fetched from a URL. It is shown inline in traveller emails and on install pages, so a file that
// is not what it says (another format, a damaged chunk, a decompression bomb, a poster-sized image)
// is refused here, with the reason, rather than sent to travellers' mail clients.
// PNG (ISO/IEC 15948, W3C PNG 3rd ed.): signature, IHDR first, chunks with CRC-32, IDAT runs
// consecutive, IEND last; the zlib stream of the IDATs inflates to exactly the scanlines IHDR says.
import { crc32, inflateSync } from "node:zlib";

/** The largest logo stored: 40 KiB keeps the request (base64 of it) within the 64 KiB body limit. */
export const MAX_LOGO_BYTES = 40 * 1024;
/** Wider or taller than this is not a logo; it also bounds the inflated size (a bomb). */
export const MAX_LOGO_SIDE_PX = 1024;
/** A real PNG of 40 KiB has a few dozen chunks; thousands are an attack on the parser. */
const MAX_CHUNKS = 1_000;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Bits per sample allowed for each colour type (PNG spec, table 11.1), and samples per pixel. */
const COLOUR_TYPES: Record<number, { depths: number[]; samples: number }> = {
  0: { depths: [1, 2, 4, 8, 16], samples: 1 }, // greyscale
  2: { depths: [8, 16], samples: 3 }, // truecolour
  3: { depths: [1, 2, 4, 8], samples: 1 }, // indexed
  4: { depths: [8, 16], samples: 2 }, // greyscale with alpha
  6: { depths: [8, 16], samples: 4 }, // truecolour with alpha
};

export type LogoCheck = { ok: true; width: number; height: number } | { ok: false; reason: string };

type Header = { width: number; height: number; depth: number; colour: number; interlaced: boolean };

/** Whether `png` is a sound PNG a logo may be, and why not. */
export function checkLogoPng(png: Buffer): LogoCheck {
  try {
    return checked(png);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

function checked(png: Buffer): LogoCheck {
  if (png.length > MAX_LOGO_BYTES)
    throw new Error(`is ${png.length} bytes; at most ${MAX_LOGO_BYTES} (40 KiB)`);
  if (png.length < SIGNATURE.length || !png.subarray(0, 8).equals(SIGNATURE)) {
    throw new Error("is not a PNG (no PNG signature)");
  }
  let header: Header | null = null;
  const idat: Buffer[] = [];
  let idat_ended = false;
  let palette = false;
  let at = 8;
  for (let count = 0; ; count++) {
    if (count >= MAX_CHUNKS) throw new Error(`has more than ${MAX_CHUNKS} chunks`);
    if (at + 12 > png.length) throw new Error("ends inside a chunk (no IEND)");
    const length = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) throw new Error(`has a chunk of invalid type at byte ${at}`);
    if (at + 12 + length > png.length) throw new Error(`chunk ${type} runs past the end of the file`);
    const data = png.subarray(at + 8, at + 8 + length);
    const crc = png.readUInt32BE(at + 8 + length);
    if (crc32(png.subarray(at + 4, at + 8 + length)) !== crc) throw new Error(`chunk ${type} has a bad CRC`);
    if (count === 0 && type !== "IHDR") throw new Error("does not start with IHDR");
    if (type === "IHDR") {
      if (count !== 0) throw new Error("has a second IHDR");
      header = readHeader(data);
    } else if (type === "PLTE") {
      palette = true;
    } else if (type === "IDAT") {
      if (idat_ended) throw new Error("has IDAT chunks that are not consecutive");
      idat.push(data);
    } else if (idat.length > 0) {
      idat_ended = true;
    }
    at += 12 + length;
    if (type === "IEND") break;
    // An unknown critical chunk (upper-case first letter) means the image cannot be shown right.
    if (/^[A-Z]/.test(type) && !["IHDR", "PLTE", "IDAT"].includes(type)) {
      throw new Error(`has an unknown critical chunk ${type}`);
    }
  }
  if (at !== png.length) throw new Error("has bytes after IEND");
  if (header === null) throw new Error("has no IHDR");
  if (idat.length === 0) throw new Error("has no image data (IDAT)");
  if (header.colour === 3 && !palette) throw new Error("is indexed but has no palette (PLTE)");
  checkImageData(header, Buffer.concat(idat));
  return { ok: true, width: header.width, height: header.height };
}

function readHeader(data: Buffer): Header {
  if (data.length !== 13) throw new Error("has an IHDR of the wrong length");
  const width = data.readUInt32BE(0);
  const height = data.readUInt32BE(4);
  const depth = data[8]!;
  const colour = data[9]!;
  if (width < 1 || height < 1 || width > MAX_LOGO_SIDE_PX || height > MAX_LOGO_SIDE_PX) {
    throw new Error(`is ${width}x${height} pixels; each side 1 to ${MAX_LOGO_SIDE_PX}`);
  }
  const type = COLOUR_TYPES[colour];
  if (!type?.depths.includes(depth)) throw new Error(`has colour type ${colour} at bit depth ${depth}`);
  if (data[10] !== 0 || data[11] !== 0) throw new Error("has an unknown compression or filter method");
  if (data[12] !== 0 && data[12] !== 1) throw new Error("has an unknown interlace method");
  return { width, height, depth, colour, interlaced: data[12] === 1 };
}

/** Adam7's passes: start and step, across then down. */
const ADAM7 = [
  [0, 8, 0, 8],
  [4, 8, 0, 8],
  [0, 4, 4, 8],
  [2, 4, 0, 4],
  [0, 2, 2, 4],
  [1, 2, 0, 2],
  [0, 1, 1, 2],
] as const;

/** The scanlines' sizes (filter byte included) of the whole image, pass by pass when interlaced. */
function scanlines(header: Header): number[] {
  const bits = header.depth * COLOUR_TYPES[header.colour]!.samples;
  const line = (width: number) => 1 + Math.ceil((width * bits) / 8);
  if (!header.interlaced) return new Array<number>(header.height).fill(line(header.width));
  const lines: number[] = [];
  for (const [x0, dx, y0, dy] of ADAM7) {
    const width = Math.ceil((header.width - x0) / dx);
    const height = Math.ceil((header.height - y0) / dy);
    if (width > 0) for (let y = 0; y < height; y++) lines.push(line(width));
  }
  return lines;
}

/** The zlib stream inflates (bounded: one byte past the expected size fails) to exactly the image. */
function checkImageData(header: Header, compressed: Buffer): void {
  const lines = scanlines(header);
  const expected = lines.reduce((sum, size) => sum + size, 0);
  let raw: Buffer;
  try {
    raw = inflateSync(compressed, { maxOutputLength: expected + 1 });
  } catch {
    throw new Error("has image data that does not decompress to the size its header says");
  }
  if (raw.length !== expected)
    throw new Error("has image data that does not decompress to the size its header says");
  let at = 0;
  for (const size of lines) {
    if (raw[at]! > 4) throw new Error("has a scanline with an unknown filter type");
    at += size;
  }
}
