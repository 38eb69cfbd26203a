// `esim-partner listen`: webhooks on a laptop. The API cannot reach localhost, so this follows
// GET /v1/events and POSTs each new event to the local receiver, signed exactly as the API signs a
// delivery (Standard Webhooks, the same body), so one verification code serves both. One line per
// event with the receiver's answer. An event counts as forwarded once the receiver answered, whatever
// the status (a 500 is your code's to fix, not a reason to loop); with no answer at all (the receiver
// not started yet) the same event is tried again, with backoff, so nothing is lost.
import { EsimClient } from "../client.ts";
import type { ApiEvent } from "../types.ts";
import { signWebhook } from "../webhooks.ts";
import { UsageError } from "./errors.ts";
import {
  keyFingerprint,
  type ListenState,
  markSeen,
  newSecret,
  OVERLAP_MS,
  readState,
  writeState,
} from "./listen-state.ts";

export type ListenOptions = {
  forward_to: string;
  api_key: string;
  base_url: string;
  secret: string | null;
  state_file: string;
};

/** Between polls of GET /v1/events while all is well. */
const POLL_MS = 1_000;
/** The wait after a failure (the API or the receiver) doubles up to this. */
const MAX_BACKOFF_MS = 30_000;
/** Pages of 100 read in one poll at most: a restart after a busy week forwards the newest 10,000. */
const MAX_PAGES_PER_POLL = 100;
/** As the API's own delivery attempt. */
const FORWARD_TIMEOUT_MS = 15_000;

export async function listen(options: ListenOptions): Promise<number> {
  const forward_to = checkedUrl(options.forward_to, "--forward-to");
  const base_url = checkedUrl(options.base_url, "--base-url (BASE)").replace(/\/+$/, "").replace(/\/v1$/, "");
  if (options.secret !== null && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(options.secret)) {
    throw new UsageError("--secret must be whsec_ followed by base64");
  }
  const client = new EsimClient({ apiKey: options.api_key, baseUrl: base_url, maxRetries: 0 });
  const stopped = new AbortController();
  const stop = () => stopped.abort(new Error("stopped"));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const found = readState(options.state_file, base_url, options.api_key);
    const state = found ?? (await firstState(client, base_url, options.api_key, stopped.signal));
    if (options.secret !== null) state.secret = options.secret;
    writeState(options.state_file, state);
    say(`Forwarding the events of ${base_url} to ${forward_to}`);
    say(`Signing secret: ${state.secret} (verify with it as in production; kept in ${options.state_file})`);
    say(
      found
        ? `Resuming after ${state.high_water ?? "the start"}.`
        : "Starting from now: earlier events are not sent.",
    );
    say("Ready. Ctrl-C to stop.");
    await follow(client, forward_to, options.state_file, state, stopped.signal);
    say("Stopped.");
    return 0;
  } catch (error) {
    if (stopped.signal.aborted) return 0;
    throw error;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** A first start: the events already there count as seen, so only what comes next is sent. */
async function firstState(
  client: EsimClient,
  base_url: string,
  api_key: string,
  signal: AbortSignal,
): Promise<ListenState> {
  const page = await client.events.page({ limit: 100 }, { signal });
  const state: ListenState = {
    version: 1,
    base_url,
    key_fingerprint: keyFingerprint(api_key),
    secret: newSecret(),
    high_water: null,
    seen: [],
  };
  for (const event of [...page.data].reverse()) markSeen(state, event);
  // A busy minute holds more than a page: what the first page missed down to the overlap is history too.
  for (const event of await newEvents(client, state, signal)) markSeen(state, event);
  return state;
}

async function follow(
  client: EsimClient,
  forward_to: string,
  state_file: string,
  state: ListenState,
  signal: AbortSignal,
): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    let events: ApiEvent[];
    try {
      events = await newEvents(client, state, signal);
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      const wait_ms = backoff(failures);
      say(`GET /v1/events failed: ${describe(error)}; trying again in ${Math.round(wait_ms / 1000)} s`);
      await sleep(wait_ms, signal);
      continue;
    }
    failures = 0;
    for (const event of events) {
      await forwardUntilAnswered(forward_to, state.secret, event, signal);
      if (signal.aborted) return;
      markSeen(state, event);
      writeState(state_file, state);
    }
    await sleep(POLL_MS, signal);
  }
}

/**
 * The events not forwarded yet, oldest first: newest-first pages are read down to OVERLAP_MS
 * before the newest event forwarded, and whatever is not among the ids seen is new.
 */
async function newEvents(client: EsimClient, state: ListenState, signal: AbortSignal): Promise<ApiEvent[]> {
  const floor =
    state.high_water === null ? Number.NEGATIVE_INFINITY : Date.parse(state.high_water) - OVERLAP_MS;
  const seen = new Set(state.seen.map((event) => event.id));
  const fresh: ApiEvent[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_PAGES_PER_POLL; pages++) {
    const page = await client.events.page({ limit: 100, cursor }, { signal });
    for (const event of page.data) {
      if (Date.parse(event.created_at) < floor) return fresh.reverse();
      if (!seen.has(event.id)) fresh.push(event);
    }
    if (!page.has_more || page.next_cursor === null) return fresh.reverse();
    cursor = page.next_cursor;
  }
  say(`More than ${MAX_PAGES_PER_POLL * 100} events since the last one forwarded: sending the newest ones.`);
  return fresh.reverse();
}

async function forwardUntilAnswered(
  forward_to: string,
  secret: string,
  event: ApiEvent,
  signal: AbortSignal,
): Promise<void> {
  for (let failures = 1; !signal.aborted; failures++) {
    const started = Date.now();
    try {
      const status = await forward(forward_to, secret, event, signal);
      say(`${event.created_at}  ${event.type}  ${event.id}  -> ${status} (${Date.now() - started} ms)`);
      return;
    } catch (error) {
      if (signal.aborted) return;
      const wait_ms = backoff(failures);
      say(
        `${event.created_at}  ${event.type}  ${event.id}  -> no answer (${describe(error)}); again in ${Math.round(wait_ms / 1000)} s`,
      );
      await sleep(wait_ms, signal);
    }
  }
}

/** One POST of the event as the API delivers it; resolves with the receiver's status. */
async function forward(
  forward_to: string,
  secret: string,
  event: ApiEvent,
  signal: AbortSignal,
): Promise<number> {
  const body = JSON.stringify(event);
  const headers = await signWebhook({ id: event.id, payload: body, secret });
  const response = await fetch(forward_to, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", "user-agent": "esim-partner-listen" },
    body,
    redirect: "manual",
    signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
  });
  await response.body?.cancel();
  return response.status;
}

function checkedUrl(text: string, name: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${name} is not a URL: ${text}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`${name} must be http(s)`);
  return url.pathname === "/" && url.search === "" ? url.origin : url.toString();
}

function backoff(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.min(failures - 1, 5));
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}
