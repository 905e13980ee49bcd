/**
 * The one router (src/host/routed-host.ts) with its two routes: sessions in a worktree's directory
 * (host/directory-route.ts) and sessions on a worker (workers/worker-route.ts), nested as
 * src/plugin.ts builds them. It runs the Host contract too, so routing cannot break it.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Host, SessionActivity } from "../../src/host/host.ts";
import { RoutedHost } from "../../src/host/routed-host.ts";
import { directoryRoute } from "../../src/host/directory-route.ts";
import { workerRoute } from "../../src/workers/worker-route.ts";
import type { WorkerHealth, WorkerLink } from "../../src/workers/worker-link.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { hostContract } from "../helpers/host-contract.ts";

/** A Host that logs `name.method` for every call and answers the given statuses. */
const recording = (name: string, log: string[], statuses: Record<string, SessionActivity> = {}): Host => new Proxy({} as Host, {
  get: (_t, method: string) => async () => {
    log.push(`${name}.${method}`);
    if (method === "statuses") return statuses;
    if (method === "createSession" || method === "forkSession") return { id: `ses_in_${name}` };
    return undefined;
  },
});
const failing = new Proxy({} as Host, { get: () => async () => { throw new Error("gone"); } });
const link = (name: string, host: Host, state: WorkerHealth["state"] = "healthy"): WorkerLink =>
  ({ name, capacity: 4, host, health: () => ({ state, since: 0 }), fileContent: async () => undefined });

describe("RoutedHost on worktree directories", () => {
  it("routes calls about a session to its directory, new sessions to the directory they name, and asks every directory in use for statuses", async () => {
    const log: string[] = [];
    const dirs: Record<string, string> = { ses_wt: "/wt/a" };
    const host = new RoutedHost(recording("local", log, { ses_main: "busy" }), directoryRoute((d) => recording(d, log, d === "/wt/a" ? { ses_wt: "busy" } : {}), {
      directoryOf: (id) => dirs[id],
      directoriesInUse: () => ["/wt/a", "/wt/a"],
    }));
    await host.prompt({ sessionID: "ses_wt", text: "x", agent: "a" });
    await host.abort("ses_main");
    await host.recentMessages("ses_wt", 3);
    await host.sessionHistory("ses_wt");
    await host.sessionExists("ses_wt");
    assert.deepEqual(await host.createSession({ title: "t", directory: "/wt/b" }), { id: "ses_in_/wt/b" });
    assert.deepEqual(await host.forkSession({ sessionID: "ses_main", title: "t", directory: "/wt/c" }), { id: "ses_in_/wt/c" });
    assert.deepEqual(await host.createSession({ title: "t" }), { id: "ses_in_local" });
    assert.deepEqual(log, ["/wt/a.prompt", "local.abort", "/wt/a.recentMessages", "/wt/a.sessionHistory", "/wt/a.sessionExists", "/wt/b.createSession", "/wt/c.forkSession", "local.createSession"]);
    log.length = 0;
    assert.deepEqual(await host.statuses(), { ses_main: "busy", ses_wt: "busy" });
    assert.deepEqual(log.sort(), ["/wt/a.statuses", "local.statuses"], "one call per directory in use");
  });

  it("agents, the session list, logs and toasts are the local host's", async () => {
    const log: string[] = [];
    const host = new RoutedHost(recording("local", log), directoryRoute((d) => recording(d, log), { directoryOf: () => "/wt/a", directoriesInUse: () => [] }));
    await host.agents();
    await host.listSessions();
    await host.log("info", "x");
    await host.toast({ title: "t", message: "m", variant: "info" });
    assert.deepEqual(log, ["local.agents", "local.listSessions", "local.log", "local.toast"]);
  });

  it("a worktree directory that does not answer leaves only its own sessions out of the statuses", async () => {
    const host = new RoutedHost({ statuses: async () => ({ ses_main: "busy" }) } as unknown as Host, directoryRoute(() => failing, {
      directoryOf: () => undefined,
      directoriesInUse: () => ["/wt/removed"],
    }));
    assert.deepEqual(await host.statuses(), { ses_main: "busy" });
  });

  it("the local host's statuses failing fails the poll", async () => {
    const host = new RoutedHost(failing, directoryRoute(() => recording("wt", []), { directoryOf: () => undefined, directoriesInUse: () => ["/wt/a"] }));
    await assert.rejects(host.statuses(), /gone/);
  });
});

describe("RoutedHost on workers", () => {
  const onWorkers = (links: WorkerLink[], workerOf: Record<string, string>, running: Record<string, string[]>, local: Host) =>
    new RoutedHost(local, workerRoute(new Map(links.map((l) => [l.name, l])), { workerOf: (id) => workerOf[id], runningOn: (w) => running[w] ?? [] }));

  it("a worker's session is answered by the worker; new sessions stay local", async () => {
    const log: string[] = [];
    const host = onWorkers([link("box", recording("box", log))], { ses_b: "box" }, {}, recording("local", log));
    await host.prompt({ sessionID: "ses_b", text: "x", agent: "a" });
    await host.abort("ses_here");
    assert.deepEqual(await host.createSession({ title: "t" }), { id: "ses_in_local" });
    assert.deepEqual(await host.forkSession({ sessionID: "ses_b", title: "t" }), { id: "ses_in_local" });
    assert.deepEqual(log, ["box.prompt", "local.abort", "local.createSession", "local.forkSession"]);
  });

  it("a session of a worker no longer configured: the call rejects naming the option, nothing is sent", async () => {
    const log: string[] = [];
    const host = onWorkers([], { ses_b: "gone-box" }, {}, recording("local", log));
    const call = host.abort("ses_b");
    assert.ok(call instanceof Promise, "a rejection, not a throw");
    await assert.rejects(call, /Worker "gone-box" is no longer configured \(plugin option "workers"\)/);
    assert.deepEqual(log, []);
  });

  it("statuses: only workers running something are asked; an unhealthy or silent worker's running children are held busy", async () => {
    const log: string[] = [];
    const host = onWorkers([
      link("box", recording("box", log, { ses_b1: "retry" })),
      link("idle", recording("idle", log)),
      link("down", recording("down", log), "unreachable"),
      link("mute", failing),
    ], {}, { box: ["ses_b1", "ses_b2"], down: ["ses_d"], mute: ["ses_m"] }, recording("local", log, { ses_here: "busy", ses_d: "retry" }));
    assert.deepEqual(await host.statuses(), { ses_here: "busy", ses_b1: "retry", ses_d: "busy", ses_m: "busy" });
    assert.deepEqual(log.sort(), ["box.statuses", "local.statuses"], "an unhealthy worker is not asked");
  });

  it("nested over the directories' router: each session goes to its own host, statuses from all", async () => {
    const log: string[] = [];
    const local = new RoutedHost(recording("local", log, { ses_here: "busy" }), directoryRoute((d) => recording(d, log, { ses_wt: "busy" }), {
      directoryOf: (id) => (id === "ses_wt" ? "/wt/a" : undefined),
      directoriesInUse: () => ["/wt/a"],
    }));
    const host = onWorkers([link("box", recording("box", log, { ses_b: "busy" }))], { ses_b: "box" }, { box: ["ses_b"] }, local);
    for (const id of ["ses_b", "ses_wt", "ses_here"]) await host.abort(id);
    assert.deepEqual(await host.createSession({ title: "t", directory: "/wt/n" }), { id: "ses_in_/wt/n" });
    assert.deepEqual(log, ["box.abort", "/wt/a.abort", "local.abort", "/wt/n.createSession"]);
    assert.deepEqual(await host.statuses(), { ses_here: "busy", ses_wt: "busy", ses_b: "busy" });
  });
});

/** The contract's world behind both routers: `live` here, `busy` in a worktree directory or on a worker, `gone` routed away. */
async function routedWorld(busyOn: "directory" | "worker") {
  const clock = new FakeClock();
  const [here, worktree, worker] = [new FakeHost(clock), new FakeHost(clock), new FakeHost(clock)];
  const { id: live } = await here.createSession({ title: "live" });
  await here.prompt({ sessionID: live, text: "Hello.", agent: "build" });
  here.finishRun(live, "Hello back.");
  await here.createSession({ parentID: live, title: "child" });
  (busyOn === "directory" ? worktree : worker).addSession("ses_busy", "busy");
  const local = new RoutedHost(here, directoryRoute(() => worktree, {
    directoryOf: (id) => (busyOn === "directory" && id === "ses_busy" ? "/wt/a" : undefined),
    directoriesInUse: () => (busyOn === "directory" ? ["/wt/a"] : []),
  }));
  const host = new RoutedHost(local, workerRoute(new Map([["box", link("box", worker)]]), {
    workerOf: (id) => (id === "ses_gone" || (busyOn === "worker" && id === "ses_busy") ? "box" : undefined),
    runningOn: () => (busyOn === "worker" ? ["ses_busy"] : []),
  }));
  return { host, live, gone: "ses_gone", busy: "ses_busy" };
}

hostContract("the RoutedHost, a session in a worktree directory", () => routedWorld("directory"));
hostContract("the RoutedHost, a session on a worker", () => routedWorld("worker"));
