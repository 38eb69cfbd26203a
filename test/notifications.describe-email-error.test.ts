// What a partner reads of a failed email (notifications/describe-email-error.ts): a class of
// failure and the SMTP reply code, never the relay's host, port or login from the raw text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { describeEmailError } from "../src/notifications/describe-email-error.ts";

test("a relay's answer is told by its class and reply code; host, port and login never", () => {
  const cases: [string, string][] = [
    [
      "email not delivered (EENVELOPE 550): Can't send mail - all recipients were rejected: 550 5.1.1 [address]: user unknown",
      "rejected by the mail server (550 5.1.1)",
    ],
    [
      "email not delivered (EMESSAGE 451): Message failed: 451 4.3.0 try later",
      "temporarily refused by the mail server (451 4.3.0)",
    ],
    ["451 4.3.0 try later", "temporarily refused by the mail server (451 4.3.0)"],
    [
      "email not delivered (EAUTH 535): Invalid login: 535 5.7.8 Authentication failed for relay-user on smtp.internal:587",
      "rejected by the mail server (535 5.7.8)",
    ],
    ["email not delivered (EMESSAGE 554): Message rejected", "rejected by the mail server (554)"],
    ["email not delivered (ESOCKET): connect ECONNREFUSED 10.20.30.40:587", "mail server unreachable"],
    ["email not delivered (EDNS): getaddrinfo ENOTFOUND smtp.relay.internal", "mail server unreachable"],
    ["email not delivered (ETIMEDOUT): Connection timeout to 10.20.30.40:465", "timed out"],
    ["email not delivered (unknown): The operation was aborted due to timeout", "timed out"],
    ["email not delivered (EENVELOPE): recipient rejected", "rejected by the mail server"],
    [
      "order ord_1 has no purchase at position 0",
      "not sent: an internal error (the operator has the details)",
    ],
    [
      "not sent: the order was refunded, its eSIM is cancelled",
      "not sent: the order was refunded, its eSIM is cancelled",
    ],
  ];
  for (const [raw, told] of cases) {
    const described = describeEmailError(raw);
    assert.equal(described, told, raw);
    assert.doesNotMatch(described!, /10\.20|smtp\.|relay|:587|:465/, raw);
  }
  assert.equal(describeEmailError(null), null);
});
