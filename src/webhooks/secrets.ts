// The service's SecretBox, made from the configuration once per key.
import type { Config } from "../config.ts";
import { type SecretBox, secretBox } from "./secret-box.ts";

const boxes = new Map<string, SecretBox>();

export function secretsOf(config: Pick<Config, "webhook_secret_key">): SecretBox {
  const key = config.webhook_secret_key;
  // main.ts sets one in the sandbox and config.ts requires one in production.
  if (key === null) throw new Error("WEBHOOK_SECRET_KEY is not set");
  let box = boxes.get(key);
  if (box === undefined) {
    box = secretBox(key);
    boxes.set(key, box);
  }
  return box;
}
