// Applies the migrations to DATABASE_URL and exits. `npm start` does this itself at start-up;
// this is for deployments that migrate as a separate release step.

import { migrate } from "../src/db/migrate.ts";
import { createPool } from "../src/db/pool.ts";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}
const pool = createPool(url, 2, "esim-migrate");
try {
  const { applied } = await migrate(pool);
  console.log(applied.length ? `applied ${applied.join(", ")}` : "nothing to apply");
} finally {
  await pool.end();
}
