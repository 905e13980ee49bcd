import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools, buildTools } from "../../src/tools/build-tools.ts";
import { DEFAULT_OPTIONS } from "../../src/options/options.ts";
import { askForAutomationsByDefault } from "../../src/plugin/automation-permission.ts";

function setup() {
  const db = tempDb();
  const f = automationFixture(db.path);
  after(() => { f.close(); db.cleanup(); });
  f.runs.start();
  const tools = automationTools(f.automations, (m) => f.crashes.push(m));
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
  it("automations: false registers none of them", () => {
    const f = automationFixture(tempDb().path);
    const withOut = buildTools({ manager: f.manager, clock: f.clock, options: { ...DEFAULT_OPTIONS, automations: false }, onCrash: () => {} });
    assert.equal(Object.keys(withOut).filter((n) => n.startsWith("task_")).length, 0);
    f.close();
  });

  it("descriptions say scheduled background work, not a to-do list", () => {
    const { f } = setup();
    const create = automationTools(f.automations, () => {}).task_create!.description;
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
    const id = out.match(/automation (au\w+)/)![1]!;
    assert.match((asked[0] as { patterns: string[] }).patterns.join(), new RegExp(`^${id}@v1-[0-9a-f]{12}$`), "the automation's id and approved version, not its title");
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
    assert.equal(f.catalog.get(id)!.enabled, false);
    assert.equal(asked.length, 1);
  });

  it("a rejected approval stores nothing and says so", async () => {
    const { f, call, reject } = setup();
    reject();
    const out = await call("task_create", { title: "spam", prompt: "p", triggers: [{ every: "1m" }] });
    assert.match(out, /rejected automation "spam"; nothing was stored/);
    assert.equal(f.catalog.list().length, 0);
  });

  it("bad triggers and agents answer how to fix them and change nothing", async () => {
    const { f, call, asked } = setup();
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ every: "soon" }] }), /triggers\[0\]: "every": "soon" is not a duration; write e\.g\. "90s"/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ cron: "* * *" }] }), /has 3 fields; use 5 .* or 6/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ cron: "0 9 * * *", timezone: "Mars/Base" }] }), /not an IANA time zone/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ at: "2001-01-01T00:00:00Z" }] }), /is in the past/);
    assert.match(await call("task_create", { title: "t", prompt: "p", triggers: [{ every: "1s", at: "2030-01-01T00:00:00Z" }] }), /exactly one kind; got every and at\. Shapes: .*"webhook"/);
    assert.match(await call("task_create", { title: "t", prompt: "p", agent: "nobody" }), /Unknown agent "nobody"\. Available agents: general/);
    assert.match(await call("task_create", { title: "t", prompt: "p", notify: "sometimes" }), /invalid arguments.*"notify"/);
    assert.match(await call("task_read", { id: "au_nope" }), /No automation "au_nope"/);
    assert.equal(f.catalog.list().length, 0);
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
    assert.equal(f.catalog.list().length, 0);
  });

  it("expect is stored, asked for as bash when it has a command, shown by task_read and passed to every run's launch", async () => {
    const { f, call, asked } = setup();
    f.host.setActivity(PARENT, "idle");
    const extras: unknown[] = [];
    const launch = f.manager.launch.bind(f.manager);
    f.manager.launch = (input) => { extras.push(input.extras); return launch(input); };
    const out = await call("task_create", { title: "tests", prompt: "fix tests", expect: { files: ["report.md"], command: "npm test" } });
    const id = out.match(/automation (au\w+)/)![1]!;
    assert.deepEqual(asked.map((a) => (a as { permission: string }).permission), ["background_automation", "bash"]);
    assert.deepEqual((asked[1] as { patterns: string[] }).patterns, ["npm test"]);
    assert.match(await call("task_read", { id }), /expect: files report\.md exist, non-empty; `npm test` exits 0 after each run/);
    await call("task_run", { id });
    assert.deepEqual(extras, [{ expect: { files: ["report.md"], command: "npm test" } }]);
    assert.match(await call("task_update", { id, expect: { command: "make check" } }), /Updated/);
    assert.deepEqual((asked.at(-1) as { permission: string; patterns: string[] }), { permission: "bash", patterns: ["make check"], always: ["make check *"], metadata: { command: "make check", description: "expect.command of an automation", patterns: ["make check"] } });
    assert.deepEqual(f.catalog.get(id)!.expect, { command: "make check" });
    const asks = asked.length;
    assert.match(await call("task_update", { id, expect: {} }), /Updated/);
    assert.equal(f.catalog.get(id)!.expect, undefined);
    assert.doesNotMatch(await call("task_read", { id }), /expect:/);
    assert.equal(asked.length, asks, "removing the expectation asks nothing");
  });

  it("a refused expect.command stores nothing; a blank expect is refused before anyone is asked", async () => {
    const { f, call, asked, reject } = setup();
    assert.match(await call("task_create", { title: "t", prompt: "p", expect: {} }), /expect needs "files" .* or "command"/);
    assert.match(await call("task_create", { title: "t", prompt: "p", expect: { files: [" "] } }), /expect\.files must list at least one path/);
    assert.equal(asked.length, 0);
    const id = (await call("task_create", { title: "t", prompt: "p", enabled: false })).match(/automation (au\w+)/)![1]!;
    reject();
    assert.match(await call("task_update", { id, expect: { command: "rm -rf /" } }), /Running `rm -rf \/` after each run was not allowed \(bash permission\); the automation is unchanged/);
    assert.equal(f.catalog.get(id)!.expect, undefined);
    assert.match(await call("task_create", { title: "u", prompt: "p", enabled: false, expect: { command: "rm -rf /" } }), /not allowed \(bash permission\); nothing was stored/);
    assert.equal(f.catalog.list().length, 1);
  });

  it("task_run on an automation created disabled asks for approval first; a rejection runs nothing", async () => {
    const { f, call, asked, reject } = setup();
    f.host.setActivity(PARENT, "idle");
    const id = (await call("task_create", { title: "quiet", prompt: "p", enabled: false })).match(/automation (au\w+)/)![1]!;
    const other = (await call("task_create", { title: "loud", prompt: "p", enabled: false })).match(/automation (au\w+)/)![1]!;
    assert.equal(asked.length, 0);
    assert.match(await call("task_run", { id: other }), /Started run #1/);
    assert.equal((asked[0] as { permission: string }).permission, "background_automation");
    assert.match(await call("task_run", { id: other }), /run|Not run|Queued/);
    assert.equal(asked.length, 1, "approved once (by its first run), it is not asked again");
    reject();
    assert.match(await call("task_run", { id }), /The user rejected automation "quiet"; nothing ran/);
    assert.equal(f.catalog.get(id)!.runCount, 0);
    assert.equal(f.runs.runs(id, 10).length, 0);
    assert.equal(f.children().length, 1);
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
