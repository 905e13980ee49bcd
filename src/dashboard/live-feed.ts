import type { ServerResponse } from "node:http";

/** How often the feed asks SQLite whether anything was committed, while a page is open. */
export const LIVE_POLL_MS = 100;
const HEARTBEAT_MS = 15_000;

/**
 * Server-sent events for open pages: one timer (only while a page listens) reads SQLite's
 * data_version — one pragma, no table read — and tells every page `change` when it moved.
 */
export class LiveFeed {
  private clients = new Set<ServerResponse>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private version: number | undefined;

  constructor(private dataVersion: () => number, private pollMs = LIVE_POLL_MS, private onError: (error: unknown) => void = () => {}) {}

  add(res: ServerResponse): void {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
    res.write("retry: 1000\n\n");
    this.clients.add(res);
    res.on("close", () => this.remove(res));
    if (!this.timer) this.startTimers();
  }

  size(): number {
    return this.clients.size;
  }

  close(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
    this.stopTimers();
  }

  private remove(res: ServerResponse): void {
    this.clients.delete(res);
    if (this.clients.size === 0) this.stopTimers();
  }

  private startTimers(): void {
    this.version = this.read();
    this.timer = setInterval(() => this.check(), this.pollMs);
    this.heartbeat = setInterval(() => this.send(": keep-alive\n\n"), HEARTBEAT_MS);
  }

  private stopTimers(): void {
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    this.timer = undefined;
    this.heartbeat = undefined;
  }

  private check(): void {
    const version = this.read();
    if (version === undefined || version === this.version) return;
    this.version = version;
    this.send(`event: change\ndata: ${version}\n\n`);
  }

  private read(): number | undefined {
    try {
      return this.dataVersion();
    } catch (error) {
      this.onError(error);
      return undefined;
    }
  }

  private send(text: string): void {
    for (const res of this.clients) res.write(text);
  }
}
