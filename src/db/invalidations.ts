// Cross-process cache invalidation over PostgreSQL LISTEN/NOTIFY: a revoked API key, a catalog
// import or an eSIM's change in one process reaches every other process within milliseconds. One
// dedicated connection per process; it reconnects with backoff if the database restarts, and
// calls `onGap` when the connection is lost and again once it listens again (notices may have
// been missed in between: a cache without its own version check clears itself then).
import pg from "pg";

export type InvalidationHandlers = Partial<
  Record<
    | "api_key_revoked"
    | "partner_status_changed"
    | "catalog_changed"
    | "esim_changed"
    | "webhook_deliveries_due",
    (payload: string) => void
  >
>;

/**
 * The longest pause between reconnection attempts: after a PostgreSQL restart the notices resume
 * within this of the database being back (10 s before issue 37; one connection attempt every 2 s
 * per process costs the database nothing).
 */
const MAX_BACKOFF_MS = 2_000;

export async function listenForInvalidations(
  connectionString: string,
  handlers: InvalidationHandlers,
  onError: (error: Error) => void = () => undefined,
  onGap: () => void = () => undefined,
): Promise<{ close: () => Promise<void> }> {
  let closed = false;
  let client: pg.Client | null = null;
  let backoff_ms = 100;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString, application_name: "esim-invalidations" });
    next.on("notification", (message) => {
      const handler = handlers[message.channel as keyof InvalidationHandlers];
      if (handler) handler(message.payload ?? "");
    });
    next.on("error", (error) => {
      onError(error);
      if (client === next) void reconnect();
    });
    await next.connect();
    for (const channel of Object.keys(handlers)) await next.query(`listen ${pg.escapeIdentifier(channel)}`);
    client = next;
    backoff_ms = 100;
  };

  const reconnect = async (): Promise<void> => {
    const old = client;
    client = null;
    onGap();
    await old?.end().catch(() => undefined);
    while (!closed && client === null) {
      await new Promise((resolve) => setTimeout(resolve, backoff_ms));
      backoff_ms = Math.min(backoff_ms * 2, MAX_BACKOFF_MS);
      // Whatever was missed while disconnected is covered by each cache's short TTL.
      await connect().catch(onError);
    }
    if (client !== null) onGap();
  };

  await connect();
  return {
    close: async () => {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}
