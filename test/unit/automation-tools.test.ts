import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { tool } from "@opencode-ai/plugin";
import { encode } from "gpt-tokenizer";
import { automationFixture, tempDb, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools, AUTOMATION_TOOL_NAMES, buildTools } from "../../src/tools/build-tools.ts";
import { DEFAULT_OPTIONS } from "../../src/options.ts";
import { askForAutomationsByDefault } from "../../src/automations/create-automations.ts";

function setup() {
  const db = tempDb();
  const f = automationFixture(db.path);
  after(() => { f.close(); db.cleanup(); });
  f.service.start();
  const tools = automationTools(f.service, (m) => f.crashes.push(m));
  const asked: unknown[] = [];
  let answer: "allow" | "reject" = "allow";
  async function call(name: string, args: unknown) {
    const ctx = {
      sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
      extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
      ask: async (input: unknown) => { asked.push(input); if (answer === "reject") throw new Error("The user rejected permission"); },
    };
    return String(await tools[name]!.execute(args as never, ctx as never));
  }
  return { f, call, asked, reject: () => { answer = "reject"; } };
}

describe("task_* tools", () => {
  it("the eight definitions together cost under 1,000 tokens as the model sees them", () => {
    const db = tempDb();
    const f = automationFixture(db.path);
    after(() => { f.close(); db.cleanup(); });
    const tools = automationTools(f.service, () => {});
    assert.deepEqual(Object.keys(tools).sort(), [...AUTOMATION_TOOL_NAMES].sort());
    const text = Object.entries(tools).map(([name, t]) =>
      JSON.stringify({ name, description: t.description, parameters: tool.schema.toJSONSchema(tool.schema.object(t.args)) }));
    const tokens = encode(text.join("\n")).length;
    console.log(`automation tool definitions: ${tokens} tokens`);
    assert.ok(tokens < 1000, `${tokens} tokens`);
    assert.ok(tokens > 300, "the measure counts the schemas too");
  });

  it("automations: false registers none of them", () => {
    const f = automationFixture(tempDb().path);
    const withOut = buildTools({ manager: f.manager, clock: f.clock, options: { ...DEFAULT_OPTIONS, automations: false }, onCrash: () => {} });
    assert.equal(Object.keys(withOut).filter((n) => n.startsWith("task_")).length, 0);
    f.close();
  });

  it("descriptions say scheduled background work, not a to-do list", () => {
    const { f } = setup();
    const create = automationTools(f.service, () => {}).task_create!.description;
    assert.match(create, /schedule/);
    assert.match(create, /background/);
    assert.match(create, /Not a to-do list/);
  });

  it("create asks the user, stores the automation with next run times; list and read show it", async () => {
    const { f, call, asked } = setup();
    const out = await call("task_create", { title: "nightly", prompt: "summarise", triggers: [{ every: "30m" }, { cron: "0 9 * * 1-5", timezone: "Europe/Paris" }] });
    assert.match(out, /Created automation (au\w+) "nightly" \(enabled; notify on_change\)/);
    assert.match(out, /every 30m, next 20\d\d-/);
    assert.match(out, /cron 0 9 \* \* 1-5 \(Europe\/Paris\), next .*T0[78]:00:00Z/);
    assert.deepEqual((asked[0] as { permission: string; patterns: string[] }).permission, "background_automation");
    assert.deepEqual((asked[0] as { patterns: string[] }).patterns, ["nightly"]);
    const id = out.match(/automation (au\w+)/)![1]!;
    assert.match(await call("task_list", {}), new RegExp(`${id} "nightly": enabled; every 30m, cron .*; next 20.*; never run`));
    assert.match(await call("task_read", { id }), /Recent runs \(newest first\):\n- none yet/);
    assert.equal(f.children().length, 0);
  });

  it("created disabled, it is approved when first enabled; a rejection leaves it disabled", async () => {
    const { f, call, asked, reject } = setup();
    const id = (await call("task_create", { title: "later", prompt: "p", enabled: false, triggers: [{ every: "1h" }] })).match(/automation (au\w+)/)![1]!;
    assert.equal(asked.length, 0);
    reject();
    assert.match(await call("task_update", { id, enabled: true }), /rejected automation "later"; it stays disabled and unchanged/);
    assert.equal(f.service.get(id)!.enabled, false);
    assert.equal(asked.length, 1);
  });

  it("a rejected approval stores nothing and says so", async () => {
    const { f, call, reject } = setup();
    reject();
    const out = await call("task_create", { title: "spam", prompt: "p", triggers: [{ every: "1m" }] });
    assert.match(out, /rejected automation "spam"; nothing was stored/);
    assert.equal(f.service.list().length, 0);
  });

  it("bad triggers and agents answer how to fix them and change nothing", async () => {
    const { f, call, asked } = setup();
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ every: "soon" }] }), /triggers\[0\]: "every": "soon" is not a duration; write e\.g\. "90s"/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ cron: "* * *" }] }), /has 3 fields; use 5 .* or 6/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ cron: "0 9 * * *", timezone: "Mars/Base" }] }), /not an IANA time zone/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ at: "2001-01-01T00:00:00Z" }] }), /is in the past/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ every: "1s", at: "2030-01-01T00:00:00Z" }] }), /exactly one of/);
    assert.match(await call("task_create", { title: "t", prompt: "p", agent: "nobody" }), /Unknown agent "nobody"\. Available agents: general/);
    assert.match(await call("task_create", { title: "t", prompt: "p", notify: "sometimes" }), /invalid arguments.*"notify"/);
    assert.match(await call("task_read", { id: "au_nope" }), /No automation "au_nope"/);
    assert.equal(f.service.list().length, 0);
    assert.equal(asked.length, 0, "nothing invalid reaches the user");
  });

  it("update pauses and resumes; run starts a task; triggers add and remove; delete", async () => {
    const { f, call } = setup();
    f.host.setActivity(PARENT, "idle");
    const id = (await call("task_create", { title: "t", prompt: "p" })).match(/automation (au\w+)/)![1]!;
    assert.match(await call("task_update", { id, enabled: false }), /paused/);
    assert.match(await call("task_list", {}), /paused; no triggers; next -/);
    assert.match(await call("task_update", { id, enabled: true, notify: "always" }), /enabled/);
    const ran = await call("task_run", { id });
    assert.match(ran, /Started run #1 of au\w+ as background task (ses_\S+);/);
    const added = await call("task_trigger_add", { id, trigger: { every: "1h" } });
    const triggerId = added.match(/trigger (tr\w+)/)![1]!;
    assert.match(await call("task_read", { id }), new RegExp(`${triggerId}: every 1h`));
    assert.match(await call("task_trigger_remove", { trigger_id: triggerId }), /Removed trigger/);
    assert.match(await call("task_delete", { id }), /Deleted automation/);
    assert.equal(f.service.list().length, 0);
  });

  it("the config hook makes OpenCode ask for background_automation unless the user decided", () => {
    const empty: { permission?: unknown } = {};
    askForAutomationsByDefault(empty);
    assert.deepEqual(empty.permission, { background_automation: "ask" });
    const decided = { permission: { background_automation: "allow", edit: "deny" } };
    askForAutomationsByDefault(decided);
    assert.deepEqual(decided.permission, { background_automation: "allow", edit: "deny" });
    const other = { permission: { edit: "deny" } };
    askForAutomationsByDefault(other);
    assert.deepEqual(other.permission, { edit: "deny", background_automation: "ask" });
  });
});
