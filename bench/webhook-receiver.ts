// The webhook receiver of `npm run bench`: a process of its own, so its CPU is counted apart from the
// service's (like the load generator's). Every POST is read whole and answered 204; `GET /count`
// answers how many were received, which the harness reads before and after each measured run. It
// does not verify signatures: the tests do (test/webhooks.test.ts); here it only has to be a real,
// fast receiver on the other end of every delivery.
//
// Environment: PORT (0 picks one), HOST. Prints one line once listening: `webhook receiver listening on <port>`.
import http from "node:http";

let received = 0;
const server = http.createServer((request, response) => {
  if (request.method === "GET" && request.url === "/count") {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ received }));
    return;
  }
  // Drained, not parsed: the delivery is whole once its body has been read.
  request.resume();
  request.on("end", () => {
    if (request.method === "POST") received += 1;
    response.writeHead(request.method === "POST" ? 204 : 405).end();
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const address = server.address();
  console.log(`webhook receiver listening on ${typeof address === "object" && address ? address.port : 0}`);
});
const stop = () => server.close(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
