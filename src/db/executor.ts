// What a query runs on: the pool-backed Kysely instance, or a transaction of it. SQL functions
// that may run either way take an Executor; those that must run inside a transaction (a row lock,
// a two-statement change) take a Transaction<Database>.
import type { Kysely, Transaction } from "kysely";
import type { Database } from "./schema.ts";

export type Executor = Kysely<Database> | Transaction<Database>;
