/**
 * The worker's client against a local node:http fake of `opencode serve`: what goes on the wire
 * (basic auth, the directory), the v1 answer shape the host adapter reads, and its errors.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteClient, WorkerUnauthorizedError, WorkerUnreachableError, type RemoteClientOptions } from "../../src/workers/remote-client.ts";
import { createRemoteHost, remoteClientFor } from "../../src/workers/remote-host.ts";
import { parseSse } from "../../src/workers/sse.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { freePort } from "../harness/opencode-server.ts";

const PASSWORD = "hunter2-secret-pw";
const DIRECTORY = "/srv/checkouts/my repo";
type Seen = { method: string; path: string; query: URLSearchParams; headers: IncomingMessage["headers"]; body: string };
type Handler = (req: Seen, res: ServerResponse) => void;

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

describe("the remote client against a fake worker", () => {
  let server: Server;
  let url: string;
  const seen: Seen[] = [];
  const routes = new Map<string, Handler>();
  const opts = (more: Partial<RemoteClientOptions> = {}): RemoteClientOptions => ({ name: "box", url, username: "opencode", password: PASSWORD, passwordEnv: "BOX_PW", directory: DIRECTORY, ...more });

  before(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        const u = new URL(req.url!, "http://x");
        const entry = { method: req.method!, path: u.pathname, query: u.searchParams, headers: req.headers, body };
        seen.push(entry);
        const expected = `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}`;
        if (req.headers.authorization !== expected) return void res.writeHead(401, { "www-authenticate": 'Basic realm="Secure Area"' }).end();
        const handler = routes.get(`${req.method} ${u.pathname}`);
        if (handler) handler(entry, res);
        else json(res, 404, { name: "NotFoundError", data: { message: `no route ${u.pathname}` } });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    routes.clear();
  });

  it("sends basic auth on every call, the directory as ?directory= on GET and as x-opencode-directory otherwise", async () => {
    routes.set("GET /session/status", (_, res) => json(res, 200, { ses_1: { type: "busy" } }));
    routes.set("POST /session/ses_1/prompt_async", (_, res) => res.writeHead(204).end());
    const client = createRemoteClient(opts());
    const status = await client.session.status();
    assert.deepEqual(status.data, { ses_1: { type: "busy" } });
    assert.equal(status.response.status, 200);
    const prompt = await client.session.promptAsync({ path: { id: "ses_1" }, body: { parts: [{ type: "text", text: "hi" }] } });
    assert.deepEqual(prompt.data, {}, "a 204 answers empty data, as the SDK does");
    const [get, post] = seen;
    assert.equal(get.query.get("directory"), DIRECTORY);
    assert.equal(get.headers["x-opencode-directory"], undefined);
    assert.equal(post.query.get("directory"), null);
    assert.equal(post.headers["x-opencode-directory"], encodeURIComponent(DIRECTORY));
    assert.equal(post.headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(post.body), { parts: [{ type: "text", text: "hi" }] });
    for (const s of seen) assert.equal(s.headers.authorization, `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}`);
  });

  it("fills path ids and query values; an HTTP error comes back as { error, response } like the SDK's", async () => {
    routes.set("GET /session/ses_a/message", (req, res) => json(res, 200, [{ limit: req.query.get("limit") }]));
    const client = createRemoteClient(opts());
    assert.deepEqual((await client.session.messages({ path: { id: "ses_a" }, query: { limit: 2 } })).data, [{ limit: "2" }]);
    const missing = await client.session.get({ path: { id: "ses_gone" } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.data, undefined);
    assert.deepEqual(missing.error, { name: "NotFoundError", data: { message: "no route /session/ses_gone" } });
  });

  it("a refused password rejects with WorkerUnauthorizedError naming the worker and the variable, never the password", async () => {
    const client = createRemoteClient(opts({ password: "wrong-password-xyz" }));
    const error = await client.session.list().then(() => assert.fail("accepted"), (e: unknown) => e as Error);
    assert.ok(error instanceof WorkerUnauthorizedError);
    assert.equal(error.message, `worker "box" (${url}) refused the credentials (HTTP 401): the password in BOX_PW is wrong; set it to that server's OPENCODE_SERVER_PASSWORD`);
    assert.equal(seen[0].headers.authorization, `Basic ${Buffer.from("opencode:wrong-password-xyz").toString("base64")}`);
    const unset = await createRemoteClient(opts({ password: undefined })).ping().then(() => assert.fail("accepted"), (e: Error) => e);
    assert.ok(unset instanceof WorkerUnauthorizedError);
    assert.match(unset.message, /the environment variable BOX_PW is not set/);
    assert.equal(seen[1].headers.authorization, undefined, "no header without a password");
    const noEnv = await createRemoteClient(opts({ password: undefined, passwordEnv: undefined })).ping().then(() => assert.fail("accepted"), (e: Error) => e);
    assert.match(noEnv.message, /it wants a password: name the environment variable .* with "passwordEnv"/);
  });

  it("a worker that does not answer: WorkerUnreachableError naming its URL, without the password", async () => {
    const port = await freePort();
    const client = createRemoteClient(opts({ url: `http://127.0.0.1:${port}` }));
    const error = await client.session.status().catch((e: Error) => e);
    assert.ok(error instanceof WorkerUnreachableError);
    assert.equal(error.message, `worker "box" (http://127.0.0.1:${port}) is unreachable: connect ECONNREFUSED 127.0.0.1:${port}`);
    assert.doesNotMatch(error.message + String(error.stack), new RegExp(PASSWORD));
  });

  it("a worker that answers too late: unreachable with the wait; the caller's own abort stays an abort", async () => {
    routes.set("GET /session/status", () => undefined); // never answers
    const error = await createRemoteClient(opts({ timeoutMs: 100 })).session.status().catch((e: Error) => e);
    assert.ok(error instanceof WorkerUnreachableError);
    assert.match(error.message, /is unreachable: no answer within 0\.1 s/);
    const controller = new AbortController();
    const pinging = createRemoteClient(opts()).ping(controller.signal).then(() => assert.fail("answered"), (e: Error) => e);
    await waitFor(() => seen.length === 2, "the ping to reach the worker");
    controller.abort();
    const aborted = await pinging;
    assert.equal(aborted.name, "AbortError");
  });

  it("ping: fine on 2xx, an error naming the worker on another status", async () => {
    routes.set("GET /session/status", (_, res) => json(res, 200, {}));
    await createRemoteClient(opts()).ping();
    routes.set("GET /session/status", (_, res) => json(res, 500, { name: "UnknownError" }));
    await assert.rejects(createRemoteClient(opts()).ping(), new RegExp(`worker "box" \\(${url}\\) answered HTTP 500 to a status check`));
  });

  it("fileContent: text, base64, an empty file, and a missing one (which OpenCode answers as empty)", async () => {
    const files: Record<string, unknown> = {
      "a.txt": { type: "text", content: "hello" },
      "bin.dat": { type: "binary", content: Buffer.from("héllo").toString("base64"), encoding: "base64" },
      "sub/empty.txt": { type: "text", content: "" },
      "sub/missing.txt": { type: "text", content: "" },
    };
    routes.set("GET /file/content", (req, res) => json(res, 200, files[req.query.get("path")!]));
    routes.set("GET /file", (req, res) =>
      req.query.get("path") === "sub" ? json(res, 200, [{ name: "empty.txt", path: "sub/empty.txt", type: "file" }]) : json(res, 500, { name: "UnknownError" }),
    );
    const client = createRemoteClient(opts());
    assert.equal(await client.fileContent("a.txt"), "hello");
    assert.equal(await client.fileContent("bin.dat"), "héllo");
    assert.equal(await client.fileContent("sub/empty.txt"), "");
    assert.equal(await client.fileContent("sub/missing.txt"), undefined);
    assert.deepEqual(seen.filter((s) => s.path === "/file/content").map((s) => [s.query.get("path"), s.query.get("directory")]), Object.keys(files).map((f) => [f, DIRECTORY]));
  });

  it("checkoutExists: whether the worker can list its project directory", async () => {
    routes.set("GET /file", (_, res) => json(res, 200, []));
    assert.equal(await createRemoteClient(opts()).checkoutExists(), true);
    routes.set("GET /file", (_, res) => json(res, 500, { name: "UnknownError" }));
    assert.equal(await createRemoteClient(opts()).checkoutExists(), false);
    assert.deepEqual(seen.map((s) => s.query.get("path")), [".", "."]);
  });

  it("events: the /event stream as raw objects, until the server ends it", async () => {
    let rest = () => {};
    routes.set("GET /event", (_, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"type":"server.connected","properties":{}}\n\n');
      res.write('data: {"type":"session.idle",');
      rest = () => {
        res.write('"properties":{"sessionID":"ses_1"}}\n\n: a comment\n\n');
        res.end('data: {"type":"server.heartbeat","properties":{}}\n\n');
      };
    });
    const events: unknown[] = [];
    // The rest of the half-sent event goes once the client has read the first one: a later chunk.
    for await (const e of createRemoteClient(opts()).events(new AbortController().signal)) if (events.push(e) === 1) rest();
    assert.deepEqual(events, [
      { type: "server.connected", properties: {} },
      { type: "session.idle", properties: { sessionID: "ses_1" } },
      { type: "server.heartbeat", properties: {} },
    ]);
    assert.equal(seen[0].query.get("directory"), DIRECTORY);
  });

  it("events: an abort ends the stream; a 401 rejects as unauthorized", async () => {
    routes.set("GET /event", (_, res) => res.writeHead(200, { "content-type": "text/event-stream" }).write('data: {"type":"server.connected"}\n\n'));
    const controller = new AbortController();
    const events: unknown[] = [];
    for await (const e of createRemoteClient(opts()).events(controller.signal)) {
      events.push(e);
      controller.abort();
    }
    assert.deepEqual(events, [{ type: "server.connected" }]);
    const stream = createRemoteClient(opts({ password: "nope" })).events(new AbortController().signal);
    await assert.rejects(async () => {
      for await (const _ of stream) assert.fail("an event without auth");
    }, WorkerUnauthorizedError);
  });

  it("the remote host: logs and toasts stay local, fork is refused, refusals name the worker", async () => {
    routes.set("POST /session/ses_x/prompt_async", (_, res) => json(res, 404, { name: "NotFoundError", data: { message: "Session not found: ses_x" } }));
    const local = new FakeHost(new FakeClock());
    const logged: unknown[] = [];
    local.log = async (level, message, extra?: Record<string, unknown>) => void logged.push({ level, message, extra });
    const worker = { name: "box", url, username: "opencode", passwordEnv: "BOX_PW", directory: DIRECTORY, capacity: 4 };
    const host = createRemoteHost(worker, local, remoteClientFor(worker, { BOX_PW: PASSWORD }));
    await host.log("info", "hello", { a: 1 });
    await host.toast({ title: "t", message: "m", variant: "info" });
    assert.deepEqual(seen, [], "nothing sent to the worker");
    assert.deepEqual(logged, [{ level: "info", message: "hello", extra: { worker: "box", a: 1 } }]);
    assert.equal(local.toasts.length, 1);
    await assert.rejects(host.forkSession({ sessionID: "ses_p", title: "f" }), /worker "box" cannot fork a session of this server: copy the parent's messages/);
    await assert.rejects(host.prompt({ sessionID: "ses_x", text: "hi", agent: "build" }), /^Error: worker "box": OpenCode refused to send a prompt \(HTTP 404\): Session not found: ses_x$/);
    const wrong = createRemoteHost(worker, local, remoteClientFor(worker, { BOX_PW: "bad" }));
    await assert.rejects(wrong.statuses(), WorkerUnauthorizedError);
  });
});

describe("parseSse", () => {
  const streamOf = (chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    });
  const all = async (chunks: string[]) => {
    const out: unknown[] = [];
    for await (const e of parseSse(streamOf(chunks))) out.push(e);
    return out;
  };

  it("joins events split anywhere, CRLF split between chunks included", async () => {
    assert.deepEqual(await all(['data: {"a"', ":1}\r", "\n\r\n", 'data:{"b":2}\n', "\n"]), [{ a: 1 }, { b: 2 }]);
  });

  it("joins multi-line data; skips comments, other fields, non-JSON data and an unfinished last event", async () => {
    const text = ': hi\nevent: x\nid: 7\nretry: 10\ndata: {"a":\ndata: 1}\n\ndata: not json\n\ndata: {"c":3}\n\ndata: {"cut":true}';
    assert.deepEqual(await all([text]), [{ a: 1 }, { c: 3 }]);
  });

  it("multi-byte characters split across chunks", async () => {
    const bytes = new TextEncoder().encode('data: {"t":"héllo"}\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 13));
        controller.enqueue(bytes.slice(13));
        controller.close();
      },
    });
    const out: unknown[] = [];
    for await (const e of parseSse(stream)) out.push(e);
    assert.deepEqual(out, [{ t: "héllo" }]);
  });
});
