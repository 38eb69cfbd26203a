// Recording sent confirmation emails in batches (a group commit, shared/group-commit.ts): under
// load one statement for many emails instead of one each. A delivery not recorded is an email sent
// again once its claim runs out, so a failed write is tried again for `retry_within_ms` (the email
// sweep gives half its lease: a PostgreSQL restart or failover shorter than that sends no email
// twice; issue 37). The send's slot is free meanwhile: only the recording waits.
import type pg from "pg";
import { GROUP_COMMIT_DEFAULTS, GroupCommit, recordingRetries } from "../shared/group-commit.ts";
import { type Delivery, recordDeliveries } from "./email-outbox.sql.ts";

export class DeliveryRecorder {
  readonly #batches: GroupCommit<Delivery>;

  constructor(pool: pg.Pool, retry_within_ms = GROUP_COMMIT_DEFAULTS.retry_within_ms) {
    this.#batches = new GroupCommit(
      (deliveries) => recordDeliveries(pool, deliveries),
      recordingRetries(retry_within_ms),
    );
  }

  /** Settles once this delivery is recorded (rejects with the error of the write's last try). */
  record(delivery: Delivery): Promise<void> {
    return this.#batches.add(delivery);
  }
}
