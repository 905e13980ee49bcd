import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { startedAutomations, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import { definitionRows } from "../../src/proposals/proposal-definition.ts";
import { proposalVersion } from "../../src/proposals/proposal-version.ts";

type Asked = { permission: string; patterns: string[]; metadata: { prompt: string; budget?: string; isolation?: string } };

/** The tools on a fake host and clock, recording every permission prompt they raise. */
function setup() {
  const f = startedAutomations();
  const tools = automationTools(f.automations, (m) => f.crashes.push(m));
  const asked: Asked[] = [];
  async function call(name: string, args: unknown) {
    return String(await tools[name]!.execute(args as never, {
      sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
      extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
      ask: async (input: Asked) => void asked.push(input),
    } as never));
  }
  const automationPrompts = () => asked.filter((a) => a.permission === "background_automation");
  return { f, call, asked, automationPrompts };
}

/** What enabling or running one never approved shows after its work and bounds. */
const SETTINGS = "agent: general\nmodel: the default model\nworker: local\nreport: session\nnotify: on_change";

const BOUNDED = { budget: { usd_per_run: 0.5, usd_per_day: 2 }, isolation: "worktree" };

describe("what the user approves shows an automation's budget and isolation", () => {
  it("task_propose says them in its answer; approving it in the conversation shows them in the prompt and its metadata", async () => {
    const { f, call, automationPrompts } = setup();
    const out = await call("task_propose", { title: "nightly fix", reason: "The build breaks at night.", prompt: "fix the build", triggers: [{ every: "1h" }], ...BOUNDED });
    assert.match(out, /^Budget: \$0\.500 per run, \$2\.00 per day\.$/m);
    assert.match(out, /^Isolation: worktree \(each run in a fresh git worktree of the default branch.*your checkout is not touched\)\.$/m);
    const id = /automation (au\w+)/.exec(out)![1]!;
    assert.equal(automationPrompts().length, 0, "proposing asks nothing");

    await call("task_update", { id, enabled: true });
    const [prompt] = automationPrompts();
    assert.ok(prompt, "approving asked");
    assert.equal(prompt.metadata.prompt, `fix the build\nbudget: $0.500 per run, $2.00 per day\nisolation: worktree (each run in a fresh git worktree of the default branch, on its own branch (none left when it changed nothing); your checkout is not touched)\n${SETTINGS}`);
    assert.equal(prompt.metadata.budget, "$0.500 per run, $2.00 per day");
    assert.equal(prompt.metadata.isolation, "worktree");
    assert.equal(f.catalog.get(id)!.enabled, true);
  });

  it("approving with changes in the same call shows what it will be: a budget given there, not the stored one", async () => {
    const { call, automationPrompts } = setup();
    const out = await call("task_propose", { title: "digest", reason: "You asked for one.", prompt: "summarise", triggers: [{ every: "1h" }], budget: { usd_per_day: 5 } });
    const id = /automation (au\w+)/.exec(out)![1]!;
    await call("task_update", { id, enabled: true, budget: { usd_per_day: 1 } });
    assert.match(automationPrompts()[0]!.metadata.prompt, /^budget: \$1\.00 per day$/m);
    assert.doesNotMatch(automationPrompts()[0]!.metadata.prompt, /isolation/, "none: nothing said");
  });

  it("task_create (enabled) and task_run of one never approved show them too; none set, the prompt is the work alone", async () => {
    const { call, automationPrompts } = setup();
    await call("task_create", { title: "bounded", prompt: "check", triggers: [{ every: "1h" }], ...BOUNDED });
    assert.match(automationPrompts()[0]!.metadata.prompt, /^check\nbudget: \$0\.500 per run, \$2\.00 per day\nisolation: worktree/);
    const created = await call("task_create", { title: "later", prompt: "check later", enabled: false, budget: { tokens_per_run: 20000 } });
    const id = /automation (au\w+)/.exec(created)![1]!;
    await call("task_run", { id });
    assert.equal(automationPrompts().at(-1)!.metadata.prompt, `check later\nbudget: 20.0k tokens per run\n${SETTINGS}`, "and how it runs and reports (issue 33)");
    await call("task_create", { title: "plain", prompt: "just this" });
    assert.equal(automationPrompts().at(-1)!.metadata.prompt, `just this\n${SETTINGS}`, "task_create shows how it runs and reports too (issue 33)");
    assert.equal(automationPrompts().at(-1)!.metadata.budget, undefined);
  });

  it("the definition the dashboard and the CLI show names both, and a budget changed since the user looked is another version", async () => {
    const { f, call } = setup();
    const out = await call("task_propose", { title: "nightly fix", reason: "The build breaks at night.", prompt: "fix the build", triggers: [{ every: "1h" }], ...BOUNDED });
    const id = /automation (au\w+)/.exec(out)![1]!;
    const a = f.catalog.get(id)!;
    const rows = new Map(definitionRows(a, f.catalog.triggers(id)).map((r) => [r.label, r.text]));
    assert.equal(rows.get("Budget"), "$0.500 per run, $2.00 per day");
    assert.match(rows.get("Isolation") ?? "", /^worktree: each run in a fresh git worktree/);
    const plain = new Map(definitionRows({ ...a, budget: undefined, isolation: undefined }, []).map((r) => [r.label, r.text]));
    assert.match(plain.get("Budget") ?? "", /^none: no limit of its own/);
    assert.match(plain.get("Isolation") ?? "", /^none: runs work in your checkout/);
    const looked = proposalVersion(a, f.catalog.triggers(id));
    assert.notEqual(proposalVersion({ ...a, budget: { usdPerDay: 50 } }, f.catalog.triggers(id)), looked, "a raised budget is not what the user saw");
    assert.equal(proposalVersion({ ...a }, f.catalog.triggers(id)), looked);
  });
});
