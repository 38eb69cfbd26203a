// PNG files made byte by byte for tests of the logo check (partners/png-logo.ts): a sound one of
// any size, and the same with one thing broken, so each refusal is tested against a real file.
import { crc32, deflateSync } from "node:zlib";

export function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * An RGBA PNG of `width` x `height` in one colour (or random noise, which does not compress: a
 * large file); `idat` replaces the compressed image data.
 */
export function makePng(
  width: number,
  height: number,
  options: { noise?: boolean; idat?: Buffer; header_height?: number } = {},
): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(options.header_height ?? height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // truecolour with alpha
  const line = 1 + width * 4;
  const raw = Buffer.alloc(line * height, 0);
  for (let y = 0; y < height; y++) {
    for (let x = 1; x < line; x++) {
      raw[y * line + x] = options.noise ? Math.floor(Math.random() * 256) : x % 4 === 0 ? 255 : 0x1f;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", options.idat ?? deflateSync(raw)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The same file with one byte of its IDAT data changed and the CRC left as it was. */
export function withBadCrc(png: Buffer): Buffer {
  const copy = Buffer.from(png);
  const idat = copy.indexOf("IDAT", 8, "latin1");
  copy[idat + 4] = copy[idat + 4]! ^ 0xff;
  return copy;
}
