import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { startedAutomations, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";

/** A latch: resolves once `count` callers wait on it. */
function gate(count: number) {
  let waiting = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => (++waiting === count && open(), opened) };
}

describe("after: the cycle check runs again in the transaction that stores the trigger (issue 33)", () => {
  it("attacker: two task_trigger_add in one response (A after B, B after A), both asked at once: at most one is stored, the other is refused naming the cycle", async () => {
    const f = startedAutomations();
    const tools = automationTools(f.automations, (m) => f.crashes.push(m));
    const bothAsked = gate(2);
    let held = false;
    const call = async (name: string, args: unknown) => String(await tools[name]!.execute(args as never, {
      sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
      extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
      // The user answers both prompts once both are open, as a person does with two prompts queued.
      ask: async (input: { permission: string }) => { if (held && input.permission === "background_automation") await bothAsked.wait(); },
    } as never));
    const idOf = (out: string) => /automation (au\w+)/.exec(out)![1]!;
    const [a, b] = [idOf(await call("task_create", { title: "a", prompt: "p" })), idOf(await call("task_create", { title: "b", prompt: "p" }))];
    held = true;
    const answers = await Promise.all([
      call("task_trigger_add", { id: a, trigger: { after: b } }),
      call("task_trigger_add", { id: b, trigger: { after: a } }),
    ]);
    const stored = [...f.catalog.triggers(a), ...f.catalog.triggers(b)].filter((t) => t.spec.kind === "after");
    assert.equal(stored.length, 1, `stored: ${JSON.stringify(stored.map((t) => t.spec))}; answers: ${answers.join(" | ")}`);
    assert.equal(answers.filter((out) => /^Added trigger/.test(out)).length, 1);
    assert.match(answers.find((out) => !/^Added trigger/.test(out))!, /would make a cycle: (au\w+) -> (au\w+) -> \1; the runs would fire each other forever\..*Nothing was stored\./);
  });
});
