// The mail relay of `npm run bench`: a real SMTP server (smtp-server, the tests' own) in a process of
// its own, so its CPU is counted apart from the service's. Production always sends through a relay
// (SMTP_URL is required there); without one the sandbox writes .eml files, a development
// convenience whose fsyncs share the disk with PostgreSQL's WAL. Every message is read whole and
// accepted (250), nothing is stored: like a relay that queues it, this is the end of our work.
//
// Environment: PORT (0 picks one), HOST. Prints one line once listening: `mail relay listening on <port>`.
import { SMTPServer } from "smtp-server";

/** A confirmation email with its QR code is ~10 KB; a relay refuses much larger ones. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

let accepted = 0;
const server = new SMTPServer({
  secure: false,
  disabledCommands: ["STARTTLS"],
  authOptional: true,
  size: MAX_MESSAGE_BYTES,
  logger: false,
  // As many sessions as the service pools (EMAIL_CONCURRENCY, 256 at most) and a margin.
  maxClients: 512,
  onData(stream, _session, callback) {
    stream.resume();
    stream.on("end", () => {
      if (stream.sizeExceeded) {
        const error = Object.assign(new Error("5.3.4 Message too large"), { responseCode: 552 });
        callback(error);
        return;
      }
      accepted += 1;
      callback(null, `OK: ${accepted}`);
    });
  },
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const address = server.server.address();
  console.log(`mail relay listening on ${typeof address === "object" && address ? address.port : 0}`);
});
const stop = () => server.close(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
