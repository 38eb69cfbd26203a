// The carrier a configuration asks for: the HTTP carrier alone, or (CARRIER_PROFILES=es2plus)
// profiles from the SM-DP+ over ES2+ and the rest from the HTTP carrier. The mTLS files are read
// here, once, at start-up: a missing or unreadable file stops the process with its variable's name.
import { readFileSync } from "node:fs";
import type pg from "pg";
import type { Config } from "../../config.ts";
import type { Carrier } from "../carrier.ts";
import type { HttpCarrier } from "../carrier-api/http-carrier.ts";
import { Es2PlusCarrier } from "./es2plus-carrier.ts";
import { Es2PlusClient } from "./es2plus-client.ts";

export function composeCarrier(config: Config, pool: pg.Pool, bundles: HttpCarrier): Carrier {
  if (config.carrier_profiles !== "es2plus" || config.es2plus === null) return bundles;
  const es2 = config.es2plus;
  const client = new Es2PlusClient({
    base_url: es2.url,
    requester_id: es2.requester_id,
    cert: readPem("ES2PLUS_CLIENT_CERT_FILE", es2.client_cert_file),
    key: readPem("ES2PLUS_CLIENT_KEY_FILE", es2.client_key_file),
    ca: readPem("ES2PLUS_CA_FILE", es2.ca_file),
    timeout_ms: config.carrier_timeout_ms,
  });
  const deps = { pool, client, smdp_address: es2.smdp_address };
  return new Es2PlusCarrier(deps, bundles, config.carrier_timeout_ms);
}

/**
 * What reading the mTLS files at start-up would refuse, without starting anything: for
 * `config check`, which would otherwise pass a configuration whose start-up then fails.
 */
export function pemFileProblems(config: Config): { variable: string; problem: string }[] {
  if (config.carrier_profiles !== "es2plus" || config.es2plus === null) return [];
  const es2 = config.es2plus;
  const problems: { variable: string; problem: string }[] = [];
  for (const [variable, file] of [
    ["ES2PLUS_CLIENT_CERT_FILE", es2.client_cert_file],
    ["ES2PLUS_CLIENT_KEY_FILE", es2.client_key_file],
    ["ES2PLUS_CA_FILE", es2.ca_file],
  ] as const) {
    try {
      readPem(variable, file);
    } catch (error) {
      // readPem's message starts with the variable's name: keep only what follows it.
      problems.push({ variable, problem: (error as Error).message.slice(variable.length + 2) });
    }
  }
  return problems;
}

function readPem(variable: string, file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`${variable}: cannot read ${file}: ${(error as Error).message}`);
  }
  if (!text.includes("-----BEGIN ")) throw new Error(`${variable}: ${file} is not a PEM file`);
  return text;
}
