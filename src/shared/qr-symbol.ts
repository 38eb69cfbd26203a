// The QR symbol of an LPA string, with the mask `qrcode` would choose, chosen faster.
//
// ISO/IEC 18004 has the encoder try all eight masks and keep the one whose symbol scores the
// lowest penalty (long runs, 2x2 blocks, finder-like patterns, dark/light balance). `qrcode`
// does it through a method call per module per rule per mask, masking and unmasking in place:
// in a purchase profile it was ~8% of the service's CPU, more than the rest of the symbol and
// the PNG together. Here the symbol is built once by `qrcode` (mask 0), unmasked, and each mask
// is scored over flat arrays with the same rules and the same arithmetic, so the same mask wins
// and the symbol is `qrcode`'s own module for module (test/shared.qr-symbol.test.ts checks it
// against `qrcode` on hundreds of strings).
import { createRequire } from "node:module";
import QRCode from "qrcode";

// qrcode's format-information BCH code and its mask patterns; its package has no exports map, and
// no types for these.
const require = createRequire(import.meta.url);
const { getEncodedBits } = require("qrcode/lib/core/format-info.js") as {
  getEncodedBits(errorCorrectionLevel: unknown, mask: number): number;
};
/** The matrix as qrcode's applyMask reads and writes it. */
type MaskTarget = {
  size: number;
  isReserved(row: number, col: number): boolean;
  xor(row: number, col: number, value: boolean): void;
};
const { applyMask } = require("qrcode/lib/core/mask-pattern.js") as {
  applyMask(pattern: number, data: MaskTarget): void;
};

const MASKS = 8;

/** Per symbol size (one version each), the eight masks over its data modules: 1 where flipped. */
const maskTables = new Map<number, Uint8Array[]>();

/** qrcode's own masks, applied once per size to an all-light matrix: the modules each one flips. */
function masksFor(size: number, reserved: Uint8Array): Uint8Array[] {
  let tables = maskTables.get(size);
  if (tables !== undefined) return tables;
  tables = [];
  for (let p = 0; p < MASKS; p++) {
    const table = new Uint8Array(size * size);
    applyMask(p, {
      size,
      isReserved: (row, col) => reserved[row * size + col] === 1,
      xor: (row, col, value) => {
        table[row * size + col]! ^= value ? 1 : 0;
      },
    });
    tables.push(table);
  }
  // Forty versions at most: the cache is bounded by the standard.
  maskTables.set(size, tables);
  return tables;
}

/** The 15 format bits where qrcode's setupFormatInfo puts them, both copies. */
function writeFormatInfo(modules: Uint8Array, size: number, bits: number): void {
  for (let i = 0; i < 15; i++) {
    const bit = (bits >> i) & 1;
    const vertical_row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
    modules[vertical_row * size + 8] = bit;
    const horizontal_col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1;
    modules[8 * size + horizontal_col] = bit;
  }
  modules[(size - 8) * size + 8] = 1;
}

/**
 * N1: each run of five or more same-colour modules in a row or column, 3 + (length - 5): 3 when
 * a run reaches five, 1 for each module past it. Counted without a branch on the modules'
 * colours, which are random enough that a branch would mispredict at every other module.
 */
function penaltyN1(m: Uint8Array, size: number): number {
  let points = 0;
  for (let a = 0; a < size; a++) {
    let row_run = 0;
    let col_run = 0;
    let row_last = m[a * size]!;
    let col_last = m[a]!;
    for (let b = 0; b < size; b++) {
      const in_row = m[a * size + b]!;
      const in_col = m[b * size + a]!;
      row_run = row_run * (in_row ^ row_last ^ 1) + 1;
      col_run = col_run * (in_col ^ col_last ^ 1) + 1;
      row_last = in_row;
      col_last = in_col;
      // Runs of five are rare: these branches predict well.
      if (row_run >= 5) points += row_run === 5 ? 3 : 1;
      if (col_run >= 5) points += col_run === 5 ? 3 : 1;
    }
  }
  return points;
}

/** N2: 3 for each 2x2 block of one colour (overlapping blocks counted each). */
function penaltyN2(m: Uint8Array, size: number): number {
  let blocks = 0;
  for (let row = 0; row < size - 1; row++) {
    for (let col = 0; col < size - 1; col++) {
      const at = row * size + col;
      const sum = m[at]! + m[at + 1]! + m[at + size]! + m[at + size + 1]!;
      // 1 when the sum is 0 or 4 (sum & 3 is then 0), 0 for 1 to 3: no branch.
      blocks += (((sum & 3) + 3) >> 2) ^ 1;
    }
  }
  return blocks * 3;
}

/** N3: 40 for each 1:1:3:1:1 finder-like pattern with four light modules on a side, as qrcode counts it. */
function penaltyN3(m: Uint8Array, size: number): number {
  let found = 0;
  for (let a = 0; a < size; a++) {
    let row_bits = 0;
    let col_bits = 0;
    for (let b = 0; b < size; b++) {
      row_bits = ((row_bits << 1) & 0x7ff) | m[a * size + b]!;
      col_bits = ((col_bits << 1) & 0x7ff) | m[b * size + a]!;
      if (b >= 10) {
        if (row_bits === 0x5d0 || row_bits === 0x05d) found++;
        if (col_bits === 0x5d0 || col_bits === 0x05d) found++;
      }
    }
  }
  return found * 40;
}

/** N4: 10 for each 5% the dark share strays from 50%, rounded as qrcode rounds it. */
function penaltyN4(m: Uint8Array): number {
  let dark = 0;
  for (let i = 0; i < m.length; i++) dark += m[i]!;
  return Math.abs(Math.ceil((dark * 100) / m.length / 5) - 10) * 10;
}

/** The symbol's modules (1 dark), row by row, `size` x `size`, quiet zone excluded. */
export function qrSymbol(
  data: Buffer,
  errorCorrectionLevel: "L" | "M" | "Q" | "H",
): {
  size: number;
  data: Uint8Array;
} {
  const symbol = QRCode.create([{ data, mode: "byte" }], { errorCorrectionLevel, maskPattern: 0 });
  const { size } = symbol.modules;
  const modules = symbol.modules as unknown as { data: Uint8Array; reservedBit: Uint8Array };
  const masks = masksFor(size, modules.reservedBit);
  const unmasked = Uint8Array.from(modules.data);
  for (let i = 0; i < unmasked.length; i++) unmasked[i]! ^= masks[0]![i]!;
  const candidate = new Uint8Array(unmasked.length);
  let best = 0;
  let lowest = Number.POSITIVE_INFINITY;
  for (let p = 0; p < MASKS; p++) {
    const mask = masks[p]!;
    for (let i = 0; i < candidate.length; i++) candidate[i] = unmasked[i]! ^ mask[i]!;
    writeFormatInfo(candidate, size, getEncodedBits(symbol.errorCorrectionLevel, p));
    const penalty =
      penaltyN1(candidate, size) +
      penaltyN2(candidate, size) +
      penaltyN3(candidate, size) +
      penaltyN4(candidate);
    // Strictly lower, as qrcode: of equal scores the first mask wins.
    if (penalty < lowest) {
      lowest = penalty;
      best = p;
    }
  }
  const mask = masks[best]!;
  for (let i = 0; i < candidate.length; i++) candidate[i] = unmasked[i]! ^ mask[i]!;
  writeFormatInfo(candidate, size, getEncodedBits(symbol.errorCorrectionLevel, best));
  return { size, data: candidate };
}
