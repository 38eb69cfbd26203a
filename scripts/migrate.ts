// Applies the migrations and exits. `npm start` does this itself at start-up; this is for
// deployments that migrate as a separate release step. Through DATABASE_DIRECT_URL when it is set
// (DATABASE_URL is then a transaction-mode pooler, where the migrations' session lock cannot hold).

import { migrateDirect } from "../src/db/migrate.ts";

const url = process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL (or DATABASE_DIRECT_URL) is required");
  process.exit(2);
}
const { applied } = await migrateDirect(url, "esim-migrate");
console.log(applied.length ? `applied ${applied.join(", ")}` : "nothing to apply");
