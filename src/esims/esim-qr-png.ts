// Partner use case: the QR code of an eSIM's activation code as a PNG of the size asked for.
// Drawing a QR PNG costs ~0.2 ms of CPU (more at larger sizes) on the event loop, and the image of
// an ICCID never changes (its activation code is fixed at provisioning), so each eSIM and size is
// drawn once and kept in a bounded in-process LRU cache. The partner check runs on every request,
// before the cache.
import type { Executor } from "../db/executor.ts";
import { ApiError } from "../shared/errors.ts";
import { lpaString } from "../shared/install-kit.ts";
import { LruCache } from "../shared/lru-cache.ts";
import { qrCodePng } from "../shared/qr-code-png.ts";
import { esimActivation } from "./esims.sql.ts";
import { requireValidIccid } from "./iccid-param.ts";

export const QR_MIN_SIZE_PX = 128;
export const QR_MAX_SIZE_PX = 1024;
export const QR_DEFAULT_SIZE_PX = 512;
/** Images kept per process: at most about 1,000 x 30 KB (a 1024-pixel QR), some 30 MB. */
export const QR_CACHE_ENTRIES = 1_000;

export type QrPngCache = LruCache<Promise<Buffer>>;

export function createQrPngCache(): QrPngCache {
  return new LruCache<Promise<Buffer>>(QR_CACHE_ENTRIES);
}

export async function esimQrPng(
  db: Executor,
  cache: QrPngCache,
  input: { partner_id: string; iccid: string; size_px: number },
): Promise<Buffer> {
  requireValidIccid(input.iccid);
  if (!Number.isInteger(input.size_px) || input.size_px < QR_MIN_SIZE_PX || input.size_px > QR_MAX_SIZE_PX) {
    throw new ApiError("invalid_request", `size is ${QR_MIN_SIZE_PX} to ${QR_MAX_SIZE_PX} pixels.`, {
      errors: [
        {
          field: "size",
          code: "out_of_range",
          message: `must be an integer from ${QR_MIN_SIZE_PX} to ${QR_MAX_SIZE_PX}`,
        },
      ],
    });
  }
  const esim = await esimActivation(db, input.partner_id, input.iccid);
  if (!esim) throw new ApiError("esim_not_found", `No eSIM ${input.iccid} for this partner.`);
  const key = `${input.iccid}:${input.size_px}`;
  const cached = cache.get(key);
  if (cached) return cached;
  // The promise is cached, so concurrent first requests draw once; a failed drawing is not kept.
  const drawing = qrCodePng(lpaString(esim.smdp_address, esim.activation_code), input.size_px);
  cache.set(key, drawing);
  drawing.catch(() => cache.delete(key));
  return drawing;
}
