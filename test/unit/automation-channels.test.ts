import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import type { ChannelNotice } from "../../src/channels/channel-message.ts";

function setup() {
  const db = tempDb();
  const sent: { notice: ChannelNotice; channels: readonly string[] }[] = [];
  const channels = { names: () => ["team", "phone"], enqueue: (notice: ChannelNotice, to: readonly string[]) => void sent.push({ notice, channels: to }), statusLines: () => ["team (hooks.example): delivered"] };
  const f = automationFixture(db.path, {}, { channels });
  after(() => { f.close(); db.cleanup(); });
  f.host.setActivity(PARENT, "idle");
  f.runs.start();
  const tools = automationTools(f.automations, () => {});
  const call = async (name: string, args: unknown) => String(await tools[name]!.execute(args as never, {
    sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal, ask: async () => {},
  } as never));
  return { ...f, sent, call };
}

async function runOnce(f: ReturnType<typeof setup>, result: string) {
  await f.clock.advance(60_000);
  const child = f.children().at(-1)!;
  f.host.finishRun(child, result);
  await f.flush();
  f.host.setActivity(PARENT, "idle");
}

describe("automations and channels", () => {
  it("a run told by the notify policy goes to the named channels and the session; report: channels skips the session", async () => {
    const f = setup();
    const both = f.create({ title: "both", channels: ["team"] }, [{ every: "1m" }]);
    await runOnce(f, "all green");
    assert.equal(f.sent.length, 1);
    assert.deepEqual(f.sent[0]!.channels, ["team"]);
    assert.equal(f.sent[0]!.notice.automation.id, both.id);
    assert.equal(f.sent[0]!.notice.result, "all green");
    assert.match(f.sent[0]!.notice.trigger, /every 1m/);
    assert.equal(f.host.promptsTo(PARENT).length, 1, "the session is told too");
    f.catalog.delete(both.id);
    f.create({ title: "only channels", channels: ["phone"], report: "channels" }, [{ every: "1m" }]);
    await runOnce(f, "done");
    assert.equal(f.sent.length, 2);
    assert.equal(f.host.promptsTo(PARENT).length, 1, "report: channels: the session hears nothing");
    assert.match(await f.call("task_read", { id: f.catalog.list()[0]!.automation.id }), /channels: phone \(only.*\n[\s\S]*run #1 completed.*\n    team \(hooks\.example\): delivered/);
  });

  it("notify never sends nowhere", async () => {
    const f = setup();
    f.create({ title: "quiet", channels: ["team"], notify: "never" }, [{ every: "1m" }]);
    await runOnce(f, "x");
    assert.equal(f.sent.length, 0);
    assert.equal(f.host.promptsTo(PARENT).length, 0);
  });

  it("task_create refuses a URL or an unknown name in channels, naming the configured ones, and stores nothing", async () => {
    const f = setup();
    assert.match(await f.call("task_create", { title: "t", prompt: "p", channels: ["https://evil.example/x"] }), /never a URL\. Configured: team, phone\./);
    assert.match(await f.call("task_create", { title: "t", prompt: "p", channels: ["ops"] }), /Unknown channel "ops"\. Configured: team, phone\./);
    assert.match(await f.call("task_create", { title: "t", prompt: "p", report: "channels" }), /report: "channels" needs at least one channel/);
    assert.equal(f.catalog.list().length, 0);
    assert.match(await f.call("task_create", { title: "t", prompt: "p", channels: ["team"] }), /Created automation/);
  });
});
