// What a partner reads of a failed email (the email log: GET /v1/orders/{orderID}/emails and the
// partner console). The stored last_error is the mailer's raw text, kept whole in the database and
// the logs for the operator; it can name the relay's host, port and login (`connect ECONNREFUSED
// 10.0.0.5:587`, `Invalid login: 535 … user relay@…`), which are the operator's, not the partner's.
// So the partner gets a class of failure and the SMTP reply code when there is one, nothing else.

/** The reply code and enhanced status code, when the text has one: `550 5.1.1`, or `451`. */
function smtpReply(raw: string): string | null {
  // A 4xx/5xx reply not part of an address or a port (an IPv4 octet is at most 255, so never 4xx).
  const enhanced = /(?<![\w.:])([45]\d\d)[ -]([245]\.\d{1,3}\.\d{1,3})(?![\w.])/.exec(raw);
  if (enhanced) return `${enhanced[1]} ${enhanced[2]}`;
  const bare = /(?<![\w.:])([45]\d\d)(?=[ )-]|$)/.exec(raw);
  return bare ? bare[1]! : null;
}

const TIMED_OUT = /ETIMEDOUT|timed? ?out|TimeoutError|ABORT_ERR|aborted/i;
const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ECONNECTION|ESOCKET|EPIPE|connection closed/i;

/**
 * The partner's reading of a stored last_error: `rejected by the mail server (550 5.1.1)`,
 * `temporarily refused by the mail server (451 4.3.0)`, `mail server unreachable`, `timed out`,
 * our own `not sent: …` reasons as they are, or `not sent: an internal error` for anything else.
 */
export function describeEmailError(raw: string | null): string | null {
  if (raw === null) return null;
  // Written by this service for the partner (a refunded order), never by a relay.
  if (raw.startsWith("not sent: ")) return raw;
  const reply = smtpReply(raw);
  if (reply !== null) {
    return reply.startsWith("5")
      ? `rejected by the mail server (${reply})`
      : `temporarily refused by the mail server (${reply})`;
  }
  if (TIMED_OUT.test(raw)) return "timed out";
  if (UNREACHABLE.test(raw)) return "mail server unreachable";
  if (/EENVELOPE|recipient rejected/.test(raw)) return "rejected by the mail server";
  return "not sent: an internal error (the operator has the details)";
}
