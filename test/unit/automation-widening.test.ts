import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import { wideningChanges } from "../../src/automations/widening.ts";
import type { Automation } from "../../src/automations/automation.ts";

type Asked = { permission: string; metadata: { prompt: string } };

/** Automation tools called by the parent's model; OpenCode's prompt answered by `answer`. */
function setup() {
  const db = tempDb();
  const f = automationFixture(db.path);
  after(() => { f.close(); db.cleanup(); });
  const tools = automationTools(f.automations, (m) => f.crashes.push(m));
  const asked: Asked[] = [];
  let answer: "allow" | "reject" = "allow";
  const call = async (name: string, args: unknown) => String(await tools[name]!.execute(args as never, {
    sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
    extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
    ask: async (input: Asked) => { asked.push(input); if (answer === "reject") throw new Error("The user rejected permission"); },
  } as never));
  /** An approved automation (the user said yes at task_create). */
  const approved = async (extra: Record<string, unknown>) => {
    const out = await call("task_create", { title: "digest", prompt: "p", triggers: [{ every: "1h" }], ...extra });
    asked.length = 0;
    return out.match(/automation (au\w+)/)![1]!;
  };
  return { f, call, asked, approved, reject: () => { answer = "reject"; } };
}

describe("widening: budget and isolation", () => {
  const current = { budget: { usdPerRun: 0.5, usdPerDay: 2 }, isolation: "worktree" } as Automation;

  it("raising or removing a limit, or the whole budget, widens; lowering or adding one does not", () => {
    assert.deepEqual(wideningChanges(current, { budget: undefined }), ["budget: $0.500 per run, $2.00 per day → no limit"]);
    assert.deepEqual(wideningChanges(current, { budget: { usdPerRun: 0.5, usdPerDay: 3 } }), ["budget: $0.500 per run, $2.00 per day → $0.500 per run, $3.00 per day"]);
    assert.equal(wideningChanges(current, { budget: { usdPerRun: 0.5 } }).length, 1, "the daily limit removed");
    assert.equal(wideningChanges(current, { budget: { tokensPerRun: 1000 } }).length, 1, "both limits replaced by another kind");
    assert.deepEqual(wideningChanges(current, { budget: { usdPerRun: 0.25, usdPerDay: 2, tokensPerDay: 9000 } }), [], "lowered and added");
    assert.deepEqual(wideningChanges({} as Automation, { budget: { usdPerDay: 1 } }), [], "a first budget only narrows");
    assert.deepEqual(wideningChanges(current, { title: "x" }), [], "a change without budget keeps it");
  });

  it("isolation worktree → none widens (runs would write in the user's checkout); none → worktree does not", () => {
    assert.deepEqual(wideningChanges(current, { isolation: undefined }), ["isolation: worktree → none"]);
    assert.deepEqual(wideningChanges({} as Automation, { isolation: "worktree" }), []);
    assert.deepEqual(wideningChanges(current, { isolation: "worktree" }), []);
  });

  it("attacker: a model's task_update removing the budget, with the ask denied, changes nothing stored", async () => {
    const { f, call, asked, approved, reject } = setup();
    const id = await approved({ budget: { usd_per_run: 0.5, usd_per_day: 2 } });
    reject();
    for (const budget of [{}, { usd_per_run: 5, usd_per_day: 2 }, { usd_per_run: 0.5 }]) {
      const out = await call("task_update", { id, budget });
      assert.match(out, /rejected automation "digest"; the automation is unchanged/);
      assert.deepEqual(f.catalog.get(id)!.budget, { usdPerRun: 0.5, usdPerDay: 2 });
    }
    assert.equal(asked.length, 3);
    assert.match(asked[0]!.metadata.prompt, /^Changes: budget: \$0\.500 per run, \$2\.00 per day → no limit$/);
    assert.equal(asked[0]!.permission, "background_automation");
  });

  it("lowering a limit or adding one asks nothing; removing one asked and allowed is stored", async () => {
    const { f, call, asked, approved } = setup();
    const id = await approved({ budget: { usd_per_day: 2 } });
    assert.match(await call("task_update", { id, budget: { usd_per_day: 1, tokens_per_run: 5000 } }), /^Updated/);
    assert.equal(asked.length, 0);
    assert.deepEqual(f.catalog.get(id)!.budget, { usdPerDay: 1, tokensPerRun: 5000 });
    assert.match(await call("task_update", { id, budget: {} }), /^Updated/);
    assert.equal(asked.length, 1);
    assert.equal(f.catalog.get(id)!.budget, undefined);
  });

  it("attacker: isolation none on an isolated automation, with the ask denied, keeps its worktree", async () => {
    const { f, call, asked, approved, reject } = setup();
    const id = await approved({ isolation: "worktree" });
    reject();
    assert.match(await call("task_update", { id, isolation: "none" }), /rejected automation "digest"; the automation is unchanged/);
    assert.equal(f.catalog.get(id)!.isolation, "worktree");
    assert.match(asked[0]!.metadata.prompt, /isolation: worktree → none/);
  });
});

describe("widening: prompt_when", () => {
  const steps = [{ name: "test", run: "true" }];

  it("failure → always widens (the model runs on every run); always → failure narrows", () => {
    assert.deepEqual(wideningChanges({ steps } as never as Automation, { promptWhen: "always" }), ["prompt_when: failure → always (the prompt runs after the steps on every run)"]);
    assert.deepEqual(wideningChanges({ promptWhen: "always" } as Automation, { promptWhen: "failure" }), []);
    assert.deepEqual(wideningChanges({ promptWhen: "always" } as Automation, { promptWhen: "always" }), []);
  });

  it("attacker: a model's task_update setting prompt_when always, with the ask denied, changes nothing stored", async () => {
    const { f, call, asked, approved, reject } = setup();
    const id = await approved({ steps });
    assert.equal(f.catalog.get(id)!.promptWhen, undefined, "the default: failure");
    reject();
    assert.match(await call("task_update", { id, prompt_when: "always" }), /rejected automation "digest"; the automation is unchanged/);
    assert.equal(f.catalog.get(id)!.promptWhen, undefined);
    assert.equal(asked.length, 1);
    assert.match(asked[0]!.metadata.prompt, /^Changes: prompt_when: failure → always/);
  });

  it("task_create shows prompt_when when asking; always is stored and failure (back) asks nothing", async () => {
    const { f, call, asked, approved } = setup();
    await call("task_create", { title: "check", prompt: "fix it", steps, triggers: [{ every: "1h" }] });
    assert.match(asked.find((a) => a.permission === "background_automation")!.metadata.prompt, /prompt_when: failure \(only when a step fails\)/);
    const id = await approved({ steps, prompt_when: "always" });
    assert.equal(f.catalog.get(id)!.promptWhen, "always");
    assert.match(await call("task_update", { id, prompt_when: "failure" }), /^Updated/);
    assert.equal(asked.length, 0);
    assert.equal(f.catalog.get(id)!.promptWhen, undefined);
  });
});
