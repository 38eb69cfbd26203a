// The physical limit of the discovery benchmark: a bare Fastify route that sends the same bytes as
// GET /v1/esim/destination/FR/packages, with nothing else (no auth, hooks, helmet, metrics, logs).
// Same Node binary and flags as the service; the harness runs it with the same wrk settings.
//
// Environment: BARE_BODY_FILE (the body, fetched from the service), PORT (0 picks one), HOST.
// Prints one line once listening: `bare server listening on <port>`.
import { readFileSync } from "node:fs";
import Fastify from "fastify";

const body = readFileSync(process.env.BARE_BODY_FILE ?? "", { encoding: null });
const app = Fastify({ logger: false, keepAliveTimeout: 72_000, connectionTimeout: 30_000 });
app.get("/v1/esim/destination/:destination_code/packages", (_request, reply) => {
  reply.type("application/json; charset=utf-8").send(body);
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? "127.0.0.1" });
const address = app.server.address();
console.log(`bare server listening on ${typeof address === "object" && address ? address.port : 0}`);
const stop = () => void app.close().then(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
