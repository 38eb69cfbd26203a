// The service's SecretBox for webhook signing secrets, made from the configuration once per key, and
// new signing secrets. The plain secret exists only in the create and rotate answers and in memory
// while signing; it is never logged.
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { type SecretBox, secretBox } from "../lib/secret-box.ts";

const boxes = new Map<string, SecretBox>();

export function secretsOf(config: Pick<Config, "webhook_secret_key">): SecretBox {
  const key = config.webhook_secret_key;
  // main.ts sets one in the sandbox and config.ts requires one in production.
  if (key === null) throw new Error("WEBHOOK_SECRET_KEY is not set");
  let box = boxes.get(key);
  if (box === undefined) {
    box = secretBox(key, "webhook-secrets-v1");
    boxes.set(key, box);
  }
  return box;
}

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
