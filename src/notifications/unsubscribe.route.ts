// The List-Unsubscribe link of the optional traveller notices (RFC 8058 one-click, RFC 2369), at
// the root, no sign-in: the token in the link is the whole credential (192 random bits, one per
// eSIM). POST turns the notices off for that eSIM, as a mail client's "Unsubscribe" button does
// with the body `List-Unsubscribe=One-Click`; GET (the link opened in a browser) only shows a page
// with the button, since RFC 8058 forbids unsubscribing on GET (link scanners follow GETs).
// Confirmations and resends are not affected: they are what the traveller bought.
import type { FastifyReply } from "fastify";
import type { AppContext } from "../shared/context.ts";
import type { App } from "../shared/http-types.ts";
import { escapeHtml } from "./render-confirmation-email.ts";
import { tokenExists, unsubscribeByToken } from "./traveller-notices.sql.ts";

/** What a token looks like (subscriptionOf makes 32 base64url characters); anything else is unknown. */
const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;
/** The bodies mail clients send are a few dozen bytes. */
const MAX_BODY_BYTES = 1024;

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header(
      "content-security-policy",
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    )
    .header("x-robots-tag", "noindex")
    .header("cache-control", "no-store")
    .type("text/html; charset=utf-8")
    .send(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">` +
        `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>` +
        `<body style="font-family:Arial,Helvetica,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem">` +
        `<h1 style="font-size:1.3rem">${escapeHtml(title)}</h1>${body}</body></html>\n`,
    );
}

const UNKNOWN = "This link is not valid";

export async function unsubscribeRoutes(app: App, ctx: Pick<AppContext, "pool">): Promise<void> {
  // Mail clients post a form (urlencoded or multipart); its content is not needed, only the POST.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_BODY_BYTES }, (_request, _body, done) =>
    done(null, null),
  );
  app.get<{ Params: { token: string } }>(
    "/unsubscribe/:token",
    { schema: { hide: true } },
    async (request, reply) => {
      const { token } = request.params;
      if (!TOKEN.test(token) || !(await tokenExists(ctx.pool, token))) {
        return page(reply, 404, UNKNOWN, "<p>Check that the whole link was copied from the email.</p>");
      }
      return page(
        reply,
        200,
        "Stop data and validity notices",
        "<p>You will no longer get emails about this eSIM's data use and validity. Emails about your purchase are not affected.</p>" +
          `<form method="post" action="/unsubscribe/${escapeHtml(token)}">` +
          '<input type="hidden" name="List-Unsubscribe" value="One-Click">' +
          '<button type="submit">Unsubscribe</button></form>',
      );
    },
  );
  app.post<{ Params: { token: string } }>(
    "/unsubscribe/:token",
    { schema: { hide: true } },
    async (request, reply) => {
      const { token } = request.params;
      const done = TOKEN.test(token) ? await unsubscribeByToken(ctx.pool, token) : null;
      if (done === null) return page(reply, 404, UNKNOWN, "<p>Nothing was changed.</p>");
      request.log.info({ iccid: done.iccid }, "traveller notices unsubscribed");
      return page(
        reply,
        200,
        "You are unsubscribed",
        "<p>You will get no more emails about this eSIM's data use and validity.</p>",
      );
    },
  );
}
