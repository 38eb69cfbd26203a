// Which of a group order's eSIMs an email carries, and to whom (issue 34, contract "Group orders").
// The completing statement (orders/order-lines.sql.ts completeGroupOrder) queues one outbox row per
// completed line whose traveller was named, at that line's position, or, when the submit named no
// traveller, one row at position 0. So:
//   - a traveller's email (row p, line p named): to that traveller, greeting them, with their own
//     eSIM only: an eSIM's QR code installs it once, so no one is sent another's;
//   - the order's email (row 0, no traveller named): to the order's address, every eSIM made;
//   - a resend to an address (send-resent-emails.ts): the eSIMs of the travellers of that address
//     when it is one of theirs (their own, never another's), else every eSIM (the order's address,
//     or another the partner gave).
// A traveller notice (send-traveller-notices.ts) goes to the traveller of its eSIM's line.

/** One eSIM of a group order, with the traveller its line named (null: none named). */
export type GroupEsimForEmail = {
  position: number;
  iccid: string;
  smdp_address: string;
  activation_code: string;
  start_date: string | null;
  install_page_url: string | null;
  traveller: { email: string; first_name: string } | null;
};

/** Which email of an order: the first confirmation of outbox `position`, or a resend to `recipient`. */
export type WhichEmail = { position: number } | { recipient: string };

/** What picking needs of an order (send-confirmation-emails.ts OrderForEmail has it). */
type OrderRecipients = {
  email: string;
  first_name: string;
  install_page_url: string | null;
  esims: GroupEsimForEmail[];
};

export type GroupEmail = { to: string; first_name: string; esims: GroupEsimForEmail[] };

/** Addresses as a traveller and a partner may type them: compared whole, case aside. */
function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** The email `which` of a group order; throws for a position no traveller's email has (a bug). */
export function groupEmail(order: OrderRecipients, which: WhichEmail): GroupEmail {
  if ("recipient" in which) {
    const theirs = order.esims.filter(
      (esim) => esim.traveller !== null && sameAddress(esim.traveller.email, which.recipient),
    );
    if (theirs.length > 0) {
      return { to: which.recipient, first_name: theirs[0]!.traveller!.first_name, esims: theirs };
    }
    return { to: which.recipient, first_name: order.first_name, esims: order.esims };
  }
  const named = order.esims.some((esim) => esim.traveller !== null);
  if (!named && which.position === 0) {
    return { to: order.email, first_name: order.first_name, esims: order.esims };
  }
  const esim = order.esims.find((candidate) => candidate.position === which.position);
  if (esim?.traveller)
    return { to: esim.traveller.email, first_name: esim.traveller.first_name, esims: [esim] };
  throw new Error(`the group order has no traveller's eSIM at position ${which.position}`);
}

/**
 * Who a notice about eSIM `iccid` of this order goes to: its line's traveller when the group
 * named one, else the order's end user; with that eSIM's own install page.
 */
export function noticeRecipient(
  order: OrderRecipients,
  iccid: string,
): { email: string; first_name: string; install_page_url: string | null } {
  const esim = order.esims.find((candidate) => candidate.iccid === iccid);
  if (esim === undefined) {
    return { email: order.email, first_name: order.first_name, install_page_url: order.install_page_url };
  }
  return {
    email: esim.traveller?.email ?? order.email,
    first_name: esim.traveller?.first_name ?? order.first_name,
    install_page_url: esim.install_page_url,
  };
}
