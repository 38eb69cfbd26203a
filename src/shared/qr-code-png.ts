// The QR code PNG of an LPA string: the image attached to the confirmation email and the one
// GET /v1/esims/{iccid}/qr.png answers, drawn the same way so both scan alike.
import QRCode from "qrcode";

// SGP.22 activation codes are short (an address and a matching ID); a longer string means bad
// data, and the QR code would become too dense for a phone camera to read from a screen.
export const LPA_MAX_LENGTH = 512;

/**
 * How pngjs (under qrcode) encodes the image. Its default tries all five PNG row filters on every
 * row and keeps the best: most of the CPU of a confirmation email, spent on the event loop that
 * serves requests (bench/README.md, purchase profile). A QR code's rows repeat the row above for a
 * whole module, which the Up filter (2) turns into zeros; with deflate's default strategy the PNG
 * is smaller than with the adaptive default, for about a quarter of the CPU. Lossless either way.
 */
const PNG_ENCODING = { filterType: 2, deflateStrategy: 0, deflateLevel: 6 };

/** The QR code of `lpa` as a PNG `width_px` pixels square. */
export async function qrCodePng(lpa: string, width_px: number): Promise<Buffer> {
  if (lpa.length > LPA_MAX_LENGTH) throw new Error(`LPA string longer than ${LPA_MAX_LENGTH} characters`);
  if (!Number.isInteger(width_px) || width_px < 64 || width_px > 2048) {
    throw new Error(`qrCodePng: width ${width_px} outside 64-2048 pixels`);
  }
  // Error correction M and the standard 4-module quiet zone: reliable when scanned off a screen.
  return QRCode.toBuffer(lpa, {
    type: "png",
    errorCorrectionLevel: "M",
    margin: 4,
    width: width_px,
    rendererOpts: PNG_ENCODING,
  });
}
