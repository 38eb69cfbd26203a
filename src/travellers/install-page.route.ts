// GET /install/{token}: the traveller's install page (contract "Travellers"). No sign-in: the
// token is the key (64 hex digits, 244 random bits, esims/install-page.ts), so the page says it
// must not be indexed (X-Robots-Tag and the robots meta) nor leak its address (no Referer), and it
// is never cached (it shows the activation code, and usage that changes). `?lang=` picks another
// language than the order's; any value is taken and resolved as a submit's would be, so a
// hand-typed `?lang=pt-BR` or `?lang=xx` still shows a page. A token that names no page (a typo, a
// revoked page) answers 404 with a page that says so.
import type { FastifyReply, FastifyRequest } from "fastify";
import { findInstallPage } from "../esims/install-page.ts";
import { loadBrand } from "../partners/traveller-settings.ts";
import { DEFAULT_BRAND } from "../shared/brand.ts";
import type { AppContext } from "../shared/context.ts";
import type { App } from "../shared/http-types.ts";
import { qrCodePng } from "../shared/qr-code-png.ts";
import { readsQuery } from "../shared/query-names.ts";
import { type RenderedPage, renderInstallPage, renderMissingPage } from "./render-install-page.ts";
import { translator } from "./translate.ts";

/** The QR image drawn into the page, in pixels: sharp at the 240 CSS pixels it is shown at. */
const PAGE_QR_WIDTH_PX = 320;

/** Headers only an HTML document uses (the server's DOCUMENT_SECURITY_HEADERS), passed in by the server. */
export type DocumentHeaders = Readonly<Record<string, string>>;

function send(
  reply: FastifyReply,
  headers: DocumentHeaders,
  status: number,
  page: RenderedPage,
  language: string,
) {
  return reply
    .status(status)
    .headers(headers)
    .header("content-security-policy", page.csp)
    .header("x-robots-tag", "noindex, nofollow")
    .header("cache-control", "no-store")
    .header("content-language", language)
    .type("text/html; charset=utf-8")
    .send(page.html);
}

function requestedLanguage(request: FastifyRequest): string | null {
  const value = (request.query as Record<string, unknown> | undefined)?.lang;
  return typeof value === "string" ? value : null;
}

export function installPageRoute(app: App, ctx: AppContext, headers: DocumentHeaders): void {
  app.get("/install/:token", { schema: { hide: true }, ...readsQuery("lang") }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const lang = requestedLanguage(request);
    const page = await findInstallPage(ctx.db, token, ctx.config.public_base_url);
    if (page === null) {
      // No page, no partner: the service's own look.
      const t = translator(lang);
      return send(reply, headers, 404, renderMissingPage(t, DEFAULT_BRAND), t.language);
    }
    const brand = await loadBrand(ctx.db, page.partner_id);
    const t = translator(lang ?? page.language);
    const qr_png = page.refunded ? null : await qrCodePng(page.esim.installation.qr_code, PAGE_QR_WIDTH_PX);
    return send(reply, headers, 200, renderInstallPage({ page, t, brand, qr_png }), t.language);
  });
}
