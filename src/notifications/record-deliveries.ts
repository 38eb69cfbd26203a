// Recording sent confirmation emails in batches (a group commit, shared/group-commit.ts): under
// load one statement for many emails instead of one each. A delivery not recorded is an email sent
// again, so a failed write is tried again within 2 s, a small share of the lease's margin
// (emailClaimCapacity keeps a tenth of it): a send's slot is held meanwhile.
import type pg from "pg";
import { GroupCommit } from "../shared/group-commit.ts";
import { type Delivery, recordDeliveries } from "./email-outbox.sql.ts";

export class DeliveryRecorder {
  readonly #batches: GroupCommit<Delivery>;

  constructor(pool: pg.Pool) {
    this.#batches = new GroupCommit((deliveries) => recordDeliveries(pool, deliveries));
  }

  /** Settles once this delivery is recorded (rejects with the error of the write's last try). */
  record(delivery: Delivery): Promise<void> {
    return this.#batches.add(delivery);
  }
}
