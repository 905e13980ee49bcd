import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionCache } from "../../src/dashboard/session-cache.ts";
import type { ForkMessage } from "../../src/fork/fork-types.ts";

const MESSAGES: ForkMessage[] = [{ info: { id: "msg_1", role: "assistant" }, parts: [] }];

describe("dashboard: a task page's session messages from the host", () => {
  function setup(read?: (id: string) => Promise<readonly ForkMessage[]>) {
    let now = 1_000_000;
    const reads: string[] = [];
    const cache = new SessionCache(read ?? (async (id) => (reads.push(id), MESSAGES)), () => now, 50);
    return { cache, reads, advance: (ms: number) => void (now += ms) };
  }

  it("reads a session once while its task's mark stays, again when it moves or after 2 s while running", async () => {
    const { cache, reads, advance } = setup();
    const running = { key: "running:1:1", running: true };
    assert.deepEqual(await cache.get("ses_a", running), { messages: MESSAGES });
    await cache.get("ses_a", running);
    assert.equal(reads.length, 1, "a refresh with nothing new reads nothing");
    await cache.get("ses_a", { key: "running:2:1", running: true });
    assert.equal(reads.length, 2, "a new tool call: read again");
    advance(2_000);
    await cache.get("ses_a", { key: "running:2:1", running: true });
    assert.equal(reads.length, 3, "a running task's messages are at most 2 s old");
    const settled = { key: "completed:2:2", running: false };
    await cache.get("ses_a", settled);
    advance(30_000);
    await cache.get("ses_a", settled);
    assert.equal(reads.length, 4, "a settled one's are kept");
  });

  it("says why when the host refuses or does not answer, and the page goes on", async () => {
    const refused = setup(async () => { throw new Error("session not found"); });
    assert.deepEqual(await refused.cache.get("ses_gone", { key: "x", running: false }), { unavailable: "session not found" });
    const hung = setup(() => new Promise(() => {}));
    assert.deepEqual(await hung.cache.get("ses_slow", { key: "x", running: true }), { unavailable: "no answer within 0.05 s" });
  });

  it("keeps at most 16 sessions", async () => {
    const { cache, reads } = setup();
    for (let i = 0; i < 17; i++) await cache.get(`ses_${i}`, { key: "k", running: false });
    await cache.get("ses_16", { key: "k", running: false });
    assert.equal(reads.length, 17);
    await cache.get("ses_0", { key: "k", running: false });
    assert.equal(reads.length, 18, "the oldest was let go");
  });
});
