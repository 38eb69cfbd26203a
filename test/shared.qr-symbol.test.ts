// qr-symbol.ts chooses the mask itself, faster than `qrcode`; the symbol must be `qrcode`'s own,
// module for module, mask for mask. `qrcode` is the independent reference here: every string is
// encoded by both, and each of the eight masks must win for some of them.
import assert from "node:assert/strict";
import { test } from "node:test";
import QRCode from "qrcode";
import { qrSymbol } from "../src/shared/qr-symbol.ts";

function reference(data: Buffer, level: "L" | "M" | "Q" | "H") {
  const symbol = QRCode.create([{ data, mode: "byte" }], { errorCorrectionLevel: level });
  const modules = symbol.modules as unknown as { size: number; data: Uint8Array };
  return { size: modules.size, data: Uint8Array.from(modules.data), mask: symbol.maskPattern as number };
}

/** Seeded bytes (xorshift32), so that a failing string can be replayed. */
function bytes(n: number, length: number): Buffer {
  let state = ((n + 1) * 2654435761) | 0;
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

/** An LPA activation code as carriers issue them, of varied lengths and alphabets. */
function lpa(n: number): Buffer {
  const matching = bytes(n, 4 + (n % 40))
    .toString(n % 3 === 0 ? "hex" : "base64url")
    .toUpperCase();
  const host = `smdp${n % 7}.example-carrier-${"x".repeat(n % 23)}.com`;
  return Buffer.from(`LPA:1$${host}$${matching}${n % 5 === 0 ? "$1.3.6.1.4.1.31746$1" : ""}`, "utf8");
}

test("the symbol is qrcode's own, mask and modules, for hundreds of strings at every level", () => {
  const winners = new Set<number>();
  const sizes = new Set<number>();
  const levels = ["L", "M", "Q", "H"] as const;
  for (let n = 0; n < 600; n++) {
    // Every tenth string arbitrary bytes, up to the 512 characters an LPA string may have (v >= 7
    // symbols, with their version information, among them).
    const data = n % 10 === 9 ? bytes(n, 1 + ((n * 7) % 512)) : lpa(n);
    const level = levels[n % 4]!;
    const expected = reference(data, level);
    const actual = qrSymbol(data, level);
    assert.equal(actual.size, expected.size, `size for string ${n}`);
    assert.deepEqual(actual.data, expected.data, `modules for string ${n} (qrcode's mask ${expected.mask})`);
    winners.add(expected.mask);
    sizes.add(expected.size);
  }
  assert.equal(winners.size, 8, "every mask won at least once: each was scored, not just the first");
  assert.ok(sizes.size >= 10, `several versions covered (${[...sizes].join(", ")})`);
  assert.ok(Math.max(...sizes) >= 45, "versions 7 and up among them");
});
