// `npm run smdp-simulator`: the sandbox SM-DP+ as a process of its own, speaking ES2+ over
// HTTPS with mutual TLS, so tests see real TLS and real network faults.
//
// Environment (every default written here):
//   DATABASE_URL            required; state lives in its `smdp_sim` schema
//   SMDP_TLS_CERT_FILE      required; PEM certificate of this server
//   SMDP_TLS_KEY_FILE       required; its private key
//   SMDP_TLS_CA_FILE        required; the CA that client (operator) certificates must chain to
//   SMDP_REQUESTER_ID       required; the operator's functionRequesterIdentifier it serves
//   SMDP_ADDRESS            required; its address for activation codes (host[:port])
//   SMDP_PORT               3200; 0 picks an ephemeral port
//   SMDP_HOST               127.0.0.1
//   SMDP_CALLBACK_URL       unset; where HandleDownloadProgressInfo goes (POST /control changes it)
//   SMDP_CALLBACK_TOKEN     unset; sent as a bearer token with each notification
//   SIMULATOR_EXIT_ON_STDIN_CLOSE  unset; "1": exit when stdin closes (tests)
//
// Prints exactly one line to stdout once listening: `smdp simulator listening on <url>`.
import { readFileSync } from "node:fs";
import { createPool } from "../../db/pool.ts";
import { type Env, integer, required, runSimulator, serveUntilStopped } from "../process.ts";
import { startSmdpSimulator } from "./server.ts";

async function main(env: Env): Promise<void> {
  const port = integer(env, "SMDP_PORT", 3200, 0, 65535);
  const pool = createPool(required(env, "DATABASE_URL"), 10, "smdp-simulator");
  await serveUntilStopped(env, "smdp simulator", pool, () =>
    startSmdpSimulator({
      pool,
      port,
      host: env.SMDP_HOST?.trim() || "127.0.0.1",
      tls: {
        cert: readFileSync(required(env, "SMDP_TLS_CERT_FILE"), "utf8"),
        key: readFileSync(required(env, "SMDP_TLS_KEY_FILE"), "utf8"),
        ca: readFileSync(required(env, "SMDP_TLS_CA_FILE"), "utf8"),
      },
      requester_id: required(env, "SMDP_REQUESTER_ID"),
      smdp_address: required(env, "SMDP_ADDRESS"),
      log: (message) => console.error(message),
      callback_url: env.SMDP_CALLBACK_URL?.trim() || null,
      callback_token: env.SMDP_CALLBACK_TOKEN?.trim() || null,
    }),
  );
}

await runSimulator("smdp simulator", main);
