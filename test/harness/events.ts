/**
 * The server's event stream, collected for assertions, plus condition polling for integration tests.
 */
import type { OpencodeClient } from "@opencode-ai/sdk";
import type { Event } from "@opencode-ai/sdk/v2";

/** The server sends v2-shaped events (with `id`), whatever the v1 client's types say. */
export type HostEvent = Event;

export interface EventLog {
  /** Every event received so far, in order (starting with `server.connected`). */
  events: HostEvent[];
  /** Resolves with the first event at index >= fromIndex that matches; rejects after timeoutMs. */
  waitForEvent<E extends HostEvent = HostEvent>(
    predicate: (event: HostEvent) => boolean,
    timeoutMs?: number,
    fromIndex?: number,
  ): Promise<E>;
  /** Stops the stream (the SDK would otherwise reconnect forever after the server stops). */
  close(): void;
}

export async function subscribeEvents(client: OpencodeClient, connectTimeoutMs = 5_000): Promise<EventLog> {
  const abort = new AbortController();
  const events: HostEvent[] = [];
  const waiters = new Set<() => void>();
  const { stream } = await client.event.subscribe({ signal: abort.signal, sseMaxRetryAttempts: 0 });
  const pump = (async () => {
    for await (const event of stream) {
      events.push(event as unknown as HostEvent);
      for (const wake of waiters) wake();
    }
  })().catch(() => {});

  const log: EventLog = {
    events,
    waitForEvent: (predicate, timeoutMs = 10_000, fromIndex = 0) =>
      waitFor(events, waiters, predicate, timeoutMs, fromIndex) as Promise<never>,
    close: () => {
      abort.abort();
      void pump;
    },
  };
  // Only return once the server has acknowledged the subscription, so no later event is missed.
  await log.waitForEvent((e) => e.type === "server.connected", connectTimeoutMs).catch((err) => {
    log.close();
    throw err;
  });
  return log;
}

function waitFor(
  events: HostEvent[],
  waiters: Set<() => void>,
  predicate: (event: HostEvent) => boolean,
  timeoutMs: number,
  fromIndex: number,
): Promise<HostEvent> {
  return new Promise((resolve, reject) => {
    let scanned = fromIndex;
    const check = () => {
      for (; scanned < events.length; scanned++) {
        if (predicate(events[scanned])) return finish(() => resolve(events[scanned]));
      }
    };
    const timer = setTimeout(() => finish(() => reject(timeoutError(events, timeoutMs))), timeoutMs);
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      waiters.delete(check);
      settle();
    };
    waiters.add(check);
    check();
  });
}

function timeoutError(events: HostEvent[], timeoutMs: number): Error {
  const seen = events.map((e) => e.type).join(", ");
  return new Error(`no matching event within ${timeoutMs} ms; saw: ${seen}`);
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Names the condition in the timeout error. */
  what?: string;
}

/** Polls fn until it returns a truthy value, and returns that value. */
export async function waitUntil<T>(fn: () => T | Promise<T>, options: WaitOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 10_000, intervalMs = 25, what = "condition" } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
