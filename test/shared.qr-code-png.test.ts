// qr-code-png.ts draws the PNG itself; its picture must be the one `qrcode` paints for the same
// symbol, pixel for pixel (qrcode's renderer is the independent reference: its scale, quiet zone
// and module arithmetic), whatever the PNG's filters and compression. Decoded here by the book
// (PNG spec: chunks, zlib, the five filter types), not by the code that wrote it.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { inflateSync } from "node:zlib";
import QRCode from "qrcode";
import { qrCodePng } from "../src/shared/qr-code-png.ts";

const require = createRequire(import.meta.url);
const renderer = require("qrcode/lib/renderer/utils.js") as {
  getOptions(options: { width: number; margin: number }): unknown;
  getImageWidth(size: number, options: unknown): number;
  qrToImageData(image: Uint8ClampedArray, qr: unknown, options: unknown): void;
};

/** qrcode's own picture of the symbol (its mask choice, one byte-mode segment), 1 for dark. */
function referencePixels(lpa: string, width: number): { side: number; dark: Uint8Array } {
  const qr = QRCode.create([{ data: Buffer.from(lpa, "utf8"), mode: "byte" }], { errorCorrectionLevel: "M" });
  const options = renderer.getOptions({ width, margin: 4 });
  const side = renderer.getImageWidth(qr.modules.size, options);
  const rgba = new Uint8ClampedArray(side * side * 4);
  renderer.qrToImageData(rgba, qr, options);
  const dark = new Uint8Array(side * side);
  for (let i = 0; i < dark.length; i++) dark[i] = rgba[i * 4] === 0 ? 1 : 0;
  return { side, dark };
}

function paeth(left: number, up: number, up_left: number): number {
  const p = left + up - up_left;
  const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - up_left)];
  return pa <= pb && pa <= pc ? left : pb <= pc ? up : up_left;
}

/** A 1-bit grayscale PNG's pixels, 1 for dark (bit 0). */
function decodePng(png: Buffer): { side: number; dark: Uint8Array; filters: Set<number> } {
  assert.deepEqual(
    [...png.subarray(0, 8)],
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    "PNG signature",
  );
  let at = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.deepEqual([...data.subarray(8, 13)], [1, 0, 0, 0, 0], "1-bit grayscale, not interlaced");
    }
    if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  assert.equal(width, height, "square");
  const raw = inflateSync(Buffer.concat(idat));
  const stride = Math.ceil(width / 8);
  assert.equal(raw.length, (stride + 1) * height, "one filter byte and the bits per row");
  const rows = new Uint8Array(stride * height);
  const filters = new Set<number>();
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    filters.add(filter);
    for (let i = 0; i < stride; i++) {
      const value = raw[y * (stride + 1) + 1 + i]!;
      const left = i > 0 ? rows[y * stride + i - 1]! : 0;
      const up = y > 0 ? rows[(y - 1) * stride + i]! : 0;
      const up_left = i > 0 && y > 0 ? rows[(y - 1) * stride + i - 1]! : 0;
      const predicted = [0, left, up, (left + up) >> 1, paeth(left, up, up_left)][filter];
      assert.ok(predicted !== undefined, `filter type ${filter}`);
      rows[y * stride + i] = (value + predicted) & 0xff;
    }
  }
  const dark = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++)
      dark[y * width + x] = ((rows[y * stride + (x >> 3)]! >> (7 - (x & 7))) & 1) ^ 1;
  }
  return { side: width, dark, filters };
}

test("the PNG is qrcode's own picture of the symbol, pixel for pixel, at the email's and the API's sizes", async () => {
  const filters = new Set<number>();
  for (let n = 0; n < 40; n++) {
    const lpa = `LPA:1$smdp${n % 5}.example-carrier.com$K2-${(n * 7919 + 1e9).toString(36).toUpperCase()}${"X".repeat(n % 30)}`;
    for (const width of [320, 128, 512, 1000 + n]) {
      const actual = decodePng(await qrCodePng(lpa, width));
      const expected = referencePixels(lpa, width);
      assert.equal(actual.side, expected.side, `width for ${lpa} at ${width}`);
      assert.ok(Buffer.from(actual.dark).equals(Buffer.from(expected.dark)), `pixels for ${lpa} at ${width}`);
      for (const filter of actual.filters) filters.add(filter);
    }
  }
  assert.deepEqual([...filters].sort(), [0, 2], "rows drawn once (filter 0), repeated through filter 2");
});

test("a symbol wider than the width asked for is drawn at qrcode's fallback scale, as qrcode draws it", async () => {
  // Long LPA strings (up to the 512 characters allowed): more modules than the pixels asked for.
  for (const [length, width] of [
    [250, 64],
    [512, 64],
    [512, 96],
  ] as const) {
    const lpa = `LPA:1$smdp.example.com$${"K2-ABCDE-".repeat(60)}`.slice(0, length);
    const actual = decodePng(await qrCodePng(lpa, width));
    const expected = referencePixels(lpa, width);
    assert.ok(actual.side > width, `drawn wider than ${width} for ${length} characters`);
    assert.equal(actual.side, expected.side);
    assert.ok(
      Buffer.from(actual.dark).equals(Buffer.from(expected.dark)),
      `pixels for ${length} at ${width}`,
    );
  }
});
