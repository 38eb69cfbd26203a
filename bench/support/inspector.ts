// CPU profiles of the service for exactly one measured run, through the V8 inspector protocol
// (the service is started with --inspect on a loopback port when the harness runs with --profile).
// `--cpu-prof` would profile the whole life of the process, setup included: carts are made
// through the service too, and they would swamp the scenario being looked at.
import { setTimeout as delay } from "node:timers/promises";

const CONNECT_TIMEOUT_MS = 10_000;
/** Microseconds between samples: fine enough for a 15 s run, cheap enough not to distort it. */
const SAMPLING_INTERVAL_US = 200;

export class InspectorSession {
  readonly #socket: WebSocket;
  #next_id = 1;
  readonly #pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      if (message.id === undefined) return;
      const waiter = this.#pending.get(message.id);
      if (!waiter) return;
      this.#pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
  }

  /** Connects to the inspector listening on 127.0.0.1:`port`. */
  static async connect(port: number): Promise<InspectorSession> {
    const deadline = Date.now() + CONNECT_TIMEOUT_MS;
    let targets: { webSocketDebuggerUrl: string }[] = [];
    while (targets.length === 0) {
      targets = await fetch(`http://127.0.0.1:${port}/json/list`)
        .then((response) => response.json() as Promise<{ webSocketDebuggerUrl: string }[]>)
        .catch(() => []);
      if (targets.length > 0) break;
      if (Date.now() > deadline) throw new Error(`no inspector on port ${port}`);
      await delay(100);
    }
    const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("error", () => reject(new Error("inspector connection failed")), {
        once: true,
      });
    });
    const session = new InspectorSession(socket);
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
    return session;
  }

  send(method: string, params: object = {}): Promise<any> {
    const id = this.#next_id++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  async start(): Promise<void> {
    await this.send("Profiler.start");
  }

  /** Stops the profiler and returns the profile (the .cpuprofile JSON). */
  async stop(): Promise<object> {
    const { profile } = (await this.send("Profiler.stop")) as { profile: object };
    return profile;
  }

  close(): void {
    this.#socket.close();
  }
}
