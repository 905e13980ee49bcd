import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type Received = { at: number; method: string; path: string; headers: IncomingHttpHeaders; body: string };
/** `hang`: never answer (until the receiver goes down); `drop`: close the connection without an answer. */
export type Answer = { status: number; headers?: Record<string, string>; hang?: boolean; drop?: boolean };

/**
 * A channel's receiving end on 127.0.0.1: records every request, answers as `answer` says
 * (200 by default). `down()` closes it (connections are refused), `up()` listens again on the
 * same port.
 */
export async function startReceiver(answer: (r: Received, index: number) => Answer = () => ({ status: 200 })) {
  const received: Received[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let server: Server | undefined;
  let port = 0;

  const listen = async () => {
    const s = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const r: Received = { at: Date.now(), method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
        const reply = answer(r, received.length);
        received.push(r);
        if (reply.drop) res.socket?.destroy();
        else if (!reply.hang) res.writeHead(reply.status, reply.headers).end("ok");
        for (const w of waiters.filter((w) => received.length >= w.n)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      });
    });
    await new Promise<void>((resolve) => s.listen(port, "127.0.0.1", resolve));
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  await listen();

  return {
    received,
    get port() {
      return port;
    },
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    /** Resolves once `n` requests arrived in all (rejects after `timeoutMs`). */
    waitFor(n: number, timeoutMs = 5000): Promise<void> {
      if (received.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver: ${received.length} of ${n} requests after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    async down(): Promise<void> {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    up: listen,
    close(): Promise<void> {
      return this.down();
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
