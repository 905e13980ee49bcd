import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  startMockModel,
  lastUserText,
  trailingToolResults,
  isTitleRequest,
  type MockModel,
} from "../harness/mock-model.ts";
import { startOpencode, type OpencodeServer } from "../harness/opencode-server.ts";
import { subscribeEvents, waitUntil, type EventLog } from "../harness/events.ts";

const HELLO_PLUGIN = fileURLToPath(new URL("../fixtures/hello-plugin", import.meta.url));
const MOCK_MODEL = { providerID: "mock", modelID: "mock-model" };

describe("mock model alone", () => {
  let mock: MockModel;
  before(async () => (mock = await startMockModel()));
  after(() => mock.close());

  it("streams several tool calls in one response, then DONE with the tool outputs", async () => {
    const prompt = 'CALL a {"x":1}\nCALL b {"y":2}';
    const first = await chat(mock, [{ role: "user", content: prompt }]);
    const calls = toolCallsIn(first);
    assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.arguments)]), [["a", { x: 1 }], ["b", { y: 2 }]]);
    assert.match(first, /"finish_reason":"tool_calls"/);
    assert.match(first, /data: \[DONE\]\n\n$/);

    const results = calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: `out-${c.name}` }));
    const assistant = { role: "assistant", content: "", tool_calls: calls.map(toWire) };
    const second = await chat(mock, [{ role: "user", content: prompt }, assistant, ...results]);
    assert.equal(textIn(second), "DONE\nout-a\nout-b");
    assert.deepEqual(trailingToolResults(mock.requests().at(-1)!).map((r) => r.content), ["out-a", "out-b"]);
  });

  it("answers REPLY, echoes without directives, and returns FAIL errors", async () => {
    assert.equal(textIn(await chat(mock, [{ role: "user", content: "hi\nREPLY exactly this" }])), "exactly this");
    assert.equal(textIn(await chat(mock, [{ role: "user", content: [{ type: "text", text: "plain  words" }] }])), "ok: plain words");
    const whole = await post(mock, { model: "m", stream: false, messages: [{ role: "user", content: "REPLY whole" }] });
    assert.equal(((await whole.json()) as any).choices[0].message.content, "whole");
    const res = await post(mock, { model: "m", stream: true, messages: [{ role: "user", content: "FAIL 400 nope" }] });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.message, "nope");
  });

  it("stops a SLOW answer when the client goes away, and counts requests in flight", async () => {
    const abort = new AbortController();
    const pending = post(mock, { model: "m", stream: true, messages: [{ role: "user", content: "SLOW 5000" }] }, abort.signal);
    await waitUntil(() => mock.inFlight().current === 1, { what: "request in flight" });
    abort.abort();
    await assert.rejects(pending);
    await waitUntil(() => mock.inFlight().current === 0 && mock.requests().at(-1)!.aborted, { what: "aborted" });
    assert.ok(mock.inFlight().peak >= 1);
  });

  it("answers title requests apart and leaves them out of requests()", async () => {
    const countBefore = mock.requests().length;
    const system = "You are a title generator. You output ONLY a thread title.";
    const text = await chat(mock, [{ role: "system", content: system }, { role: "user", content: "CALL x {}" }]);
    assert.equal(text.includes("tool_calls"), false);
    assert.equal(mock.requests().length, countBefore);
    assert.ok(isTitleRequest(mock.requests({ includeTitle: true }).at(-1)!.body));
  });
});

describe("real opencode serve with the hello plugin", () => {
  let mock: MockModel;
  let server: OpencodeServer;
  let events: EventLog;

  before(async () => {
    mock = await startMockModel();
    server = await startOpencode({ model: mock.url, pluginDir: HELLO_PLUGIN, pluginOptions: { greeting: "hey" } });
    events = await subscribeEvents(server.client);
  });

  after(async () => {
    events?.close();
    await server?.stop();
    await mock?.close();
  });

  it("calls the plugin tool, feeds its output back to the model, and goes idle", async (t) => {
    t.diagnostic(`opencode listening after ${server.startMs} ms`);
    const started = Date.now();
    const created = await server.client.session.create({ body: { title: "harness smoke" } });
    const sessionID = created.data!.id;
    const result = await server.client.session.prompt({
      path: { id: sessionID },
      body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: 'CALL hello {"name":"Ann"}' }] },
    });
    assert.equal(result.error, undefined);

    const [call, answer] = mock.requests();
    assert.equal(lastUserText(call), 'CALL hello {"name":"Ann"}');
    assert.deepEqual(trailingToolResults(answer).map((r) => r.content), ["hello, Ann! (greeting=hey)"]);
    assert.equal(mock.requests({ includeTitle: true }).length, 2, "a titled session needs no title request");
    await events.waitForEvent((e) => e.type === "session.idle" && e.properties.sessionID === sessionID);
    t.diagnostic(`session create + first prompt + idle: ${Date.now() - started} ms`);
  });

  it("logs the plugin through the server log and installed nothing", async () => {
    await waitUntil(() => server.logs().includes('message="hello plugin loaded"'), { what: "plugin log line" });
    assert.doesNotMatch(server.logs(), /dependency install failed|failed to load plugin/);
    const modules = join(server.homeDir, ".config/opencode/node_modules");
    assert.deepEqual(await readdir(modules), ["@opencode-ai"]);
    assert.ok((await lstat(join(modules, "@opencode-ai/plugin"))).isSymbolicLink(), "still our symlink: no npm reify ran");
  });
});

// ---- raw HTTP against the mock ----

function post(mock: MockModel, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${mock.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
}

async function chat(mock: MockModel, messages: unknown[]): Promise<string> {
  const res = await post(mock, { model: "m", stream: true, messages });
  assert.equal(res.status, 200);
  return res.text();
}

type WireCall = { id: string; name: string; arguments: string };

function chunks(sse: string): any[] {
  return sse
    .split("\n\n")
    .filter((block) => block.startsWith("data: {"))
    .map((block) => JSON.parse(block.slice("data: ".length)));
}

function toolCallsIn(sse: string): WireCall[] {
  return chunks(sse).flatMap((c) =>
    (c.choices[0]?.delta?.tool_calls ?? []).map((t: any) => ({ id: t.id, name: t.function.name, arguments: t.function.arguments })),
  );
}

function textIn(sse: string): string {
  return chunks(sse).map((c) => c.choices[0]?.delta?.content ?? "").join("");
}

function toWire(call: WireCall) {
  return { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } };
}
