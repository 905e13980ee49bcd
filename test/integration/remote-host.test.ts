/**
 * A worker as the issue describes it: a plain `opencode serve` with OPENCODE_SERVER_PASSWORD set,
 * its own home and checkout, the mock model. The remote Host on it is held to the same Host
 * contract as the local adapter; then the worker's files, a wrong password, its event stream,
 * and a SIGKILL followed by a restart on the same port.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";
import { freePort, startOpencode, type OpencodeServer } from "../harness/opencode-server.ts";
import { waitUntil } from "../harness/events.ts";
import { MOCK_MODEL } from "../harness/plugin-stack.ts";
import { hostContract, type ContractWorld } from "../helpers/host-contract.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import type { Host } from "../../src/host/host.ts";
import { normalizeEvent } from "../../src/host/normalize-event.ts";
import { createRemoteHost, remoteClientFor } from "../../src/workers/remote-host.ts";
import { WorkerUnauthorizedError } from "../../src/workers/remote-client.ts";
import { WorkerConnection, type WorkerConnectionOptions, type WorkerHealth } from "../../src/workers/worker-connection.ts";
import { readWorkerPassword, type WorkerConfig } from "../../src/workers/worker-config.ts";

const PASSWORD = `pw-${randomBytes(12).toString("hex")}`;
const ENV = { TEST_BOX_PASSWORD: PASSWORD };
type Raw = { type?: string; properties?: Record<string, any> };

describe("a worker: a plain opencode serve with a password, through the remote host", () => {
  let mock: MockModel;
  let worker: OpencodeServer;
  let port: number;
  let config: WorkerConfig;
  let host: Host;
  const connections: WorkerConnection[] = [];

  before(async () => {
    mock = await startMockModel();
    port = await freePort();
    worker = await startOpencode({ model: mock.url, env: { OPENCODE_SERVER_PASSWORD: PASSWORD }, port });
    config = { name: "box", url: worker.url, username: "opencode", passwordEnv: "TEST_BOX_PASSWORD", directory: worker.projectDir, capacity: 4 };
    host = createRemoteHost(config, new FakeHost(new FakeClock()), remoteClientFor(config, ENV));
  });
  after(async () => {
    for (const c of connections) c.stop();
    await worker?.stop();
    await mock?.close();
  });

  /** A connection with quick checks; raw events and health changes recorded. */
  function connect(worker: WorkerConfig, env: NodeJS.ProcessEnv, options: WorkerConnectionOptions = {}) {
    const events: Raw[] = [];
    const healths: WorkerHealth[] = [];
    const { error: startError } = readWorkerPassword(worker, env);
    const connection = new WorkerConnection(worker, remoteClientFor(worker, env), {
      onEvent: (raw) => events.push(raw as Raw),
      onHealth: (h) => healths.push(h),
      checkEveryMs: 300,
      startError,
      ...options,
    });
    connections.push(connection);
    return { connection, events, healths };
  }

  const idleAndAnswered = async (sessionID: string) => {
    if ((await host.statuses())[sessionID]) return false;
    const [last] = await host.recentMessages(sessionID, 1);
    return last?.role === "assistant" && last.completedAt !== undefined;
  };

  let sessions: Promise<{ live: string; gone: string }> | undefined;
  let busy = "";
  async function world(): Promise<ContractWorld> {
    sessions ??= (async () => {
      const { id: live } = await host.createSession({ title: "live" });
      await host.prompt({ sessionID: live, text: "REPLY hello from the worker", agent: "build", model: MOCK_MODEL });
      await waitUntil(() => idleAndAnswered(live), { timeoutMs: 20_000, what: "the live session's answer" });
      await host.createSession({ parentID: live, title: "child" });
      const { id: gone } = await host.createSession({ title: "gone" });
      const deleted = await fetch(`${worker.url}/session/${gone}?directory=${encodeURIComponent(worker.projectDir)}`, {
        method: "DELETE",
        headers: { authorization: `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}` },
      });
      assert.equal(deleted.status, 200);
      return { live, gone };
    })();
    const { live, gone } = await sessions;
    // An earlier contract test may have prompted `live` or aborted `busy`: restore both states.
    await waitUntil(() => idleAndAnswered(live), { timeoutMs: 20_000, what: "the live session idle" });
    if ((await host.statuses())[busy] !== "busy") {
      busy = (await host.createSession({ title: "busy" })).id;
      await host.prompt({ sessionID: busy, text: "SLOW 60000", agent: "build", model: MOCK_MODEL });
      await waitUntil(async () => (await host.statuses())[busy] === "busy", { what: "the busy session busy" });
    }
    return { host, live, gone, busy };
  }

  hostContract("the remote host on a worker with basic auth", world);

  it("fork is refused; logs and toasts go to the local host, not the worker", async () => {
    const local = new FakeHost(new FakeClock());
    const remote = createRemoteHost(config, local, remoteClientFor(config, ENV));
    await assert.rejects(remote.forkSession({ sessionID: (await sessions!).live, title: "f" }), /worker "box" cannot fork a session of this server/);
    await remote.log("info", "from the worker host");
    await remote.toast({ title: "t", message: "from the worker host", variant: "info" });
    assert.deepEqual([local.logs.at(-1)?.message, local.toasts.at(-1)], ["from the worker host", "from the worker host"]);
    assert.ok(!worker.logs().includes("from the worker host"));
  });

  it("fileContent reads the worker's checkout; a missing file is undefined, an empty one empty", async () => {
    writeFileSync(join(worker.projectDir, "notes.txt"), "first line\nsecond line\n");
    writeFileSync(join(worker.projectDir, "empty.txt"), "");
    const client = remoteClientFor(config, ENV);
    // OpenCode trims what it answers: the trailing newline does not come back.
    assert.equal(await client.fileContent("notes.txt"), "first line\nsecond line");
    assert.equal(await client.fileContent(join(worker.projectDir, "README.md")), "test project");
    assert.equal(await client.fileContent("empty.txt"), "");
    assert.equal(await client.fileContent("no-such-file.txt"), undefined);
    assert.equal(await client.fileContent("no-such-dir/x.txt"), undefined);
  });

  it("a wrong password: unauthorized with a clear message naming the variable, no crash, the right one still works", async () => {
    const { connection, healths } = connect(config, { TEST_BOX_PASSWORD: "not-the-password" });
    const health = await connection.check();
    assert.equal(health.state, "unauthorized");
    assert.equal(health.error, `worker "box" (${worker.url}) refused the credentials (HTTP 401): the password in TEST_BOX_PASSWORD is wrong; set it to that server's OPENCODE_SERVER_PASSWORD`);
    assert.deepEqual(healths.map((h) => h.state), ["unauthorized"]);
    const wrongHost = createRemoteHost(config, new FakeHost(new FakeClock()), remoteClientFor(config, { TEST_BOX_PASSWORD: "not-the-password" }));
    await assert.rejects(wrongHost.listSessions(), WorkerUnauthorizedError);
    const unset = connect(config, {});
    unset.connection.start();
    assert.match(unset.connection.health.error!, /the environment variable TEST_BOX_PASSWORD is not set/);
    assert.equal((await connect(config, ENV).connection.check()).state, "healthy");
    for (const h of [health, unset.connection.health]) assert.ok(!h.error!.includes(PASSWORD));
    connection.stop();
  });

  it("a directory that is no checkout on the worker is misconfigured", async () => {
    const { connection } = connect({ ...config, directory: join(worker.projectDir, "does-not-exist") }, ENV);
    const health = await connection.check();
    assert.equal(health.state, "misconfigured");
    assert.match(health.error!, /cannot list .*does-not-exist: set "directory" to the project's checkout/);
  });

  it("the event stream delivers the worker's events for a prompted session, session.idle included", async () => {
    const { connection, events } = connect(config, ENV);
    connection.start();
    await waitUntil(() => events.some((e) => e.type === "server.connected"), { what: "the stream connected" });
    const { id } = await host.createSession({ title: "streamed" });
    await host.prompt({ sessionID: id, text: "REPLY streamed", agent: "build", model: MOCK_MODEL });
    await waitUntil(() => events.some((e) => e.type === "session.idle" && e.properties?.sessionID === id), { timeoutMs: 20_000, what: "session.idle" });
    const normalized = events.map(normalizeEvent).filter((e) => e?.sessionID === id);
    assert.ok(normalized.some((e) => e?.type === "text" && e.text === "streamed"), "the answer's text came through");
    assert.equal(connection.health.state, "healthy");
    connection.stop();
  });

  it("SIGKILL: unreachable; restarted on the same port: healthy again and the stream reconnects", { timeout: 90_000 }, async () => {
    const { connection, events, healths } = connect(config, ENV);
    connection.start();
    await waitUntil(() => connection.health.state === "healthy" && events.some((e) => e.type === "server.connected"), { what: "healthy and streaming" });
    await worker.kill();
    const killedAt = Date.now();
    await waitUntil(() => connection.health.state === "unreachable", { what: "unreachable" });
    const noticedMs = Date.now() - killedAt;
    assert.match(connection.health.error!, new RegExp(`worker "box" \\(${worker.url.replace(/[.]/g, "\\.")}\\) (is unreachable: \\w.+|did not answer within 3 s)$`));
    assert.ok(!connection.health.error!.includes(PASSWORD));
    const connectsBefore = events.filter((e) => e.type === "server.connected").length;

    worker = await startOpencode({ model: mock.url, env: { OPENCODE_SERVER_PASSWORD: PASSWORD }, port, homeDir: worker.homeDir, projectDir: worker.projectDir });
    const restartedAt = Date.now();
    await waitUntil(() => connection.health.state === "healthy", { timeoutMs: 15_000, what: "healthy again" });
    const healthyMs = Date.now() - restartedAt;
    await waitUntil(() => events.filter((e) => e.type === "server.connected").length > connectsBefore, { timeoutMs: 15_000, what: "the stream reconnected" });
    const reconnectMs = Date.now() - restartedAt;
    assert.deepEqual(healths.map((h) => h.state), ["healthy", "unreachable", "healthy"]);

    assert.equal(await host.sessionExists((await sessions!).live), true, "sessions from before the kill are still there");
    const { id } = await host.createSession({ title: "after restart" });
    await host.prompt({ sessionID: id, text: "REPLY back", agent: "build", model: MOCK_MODEL });
    await waitUntil(() => events.some((e) => e.type === "session.idle" && e.properties?.sessionID === id), { timeoutMs: 20_000, what: "session.idle after the restart" });
    console.log(`# SIGKILL noticed after ${noticedMs} ms; after the restart was listening: healthy in ${healthyMs} ms, stream back in ${reconnectMs} ms`);
    connection.stop();
  });
});
