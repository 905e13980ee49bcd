import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { shownFor, withShownAsks } from "../../src/tools/shown-asks.ts";
import { createToolCallDisplay, type ToolCallDisplay } from "../../src/host/tool-call-display.ts";

type Ask = { permission: string; patterns: string[]; always: string[]; metadata: Record<string, unknown> };
const REF = { sessionID: "ses_1", messageID: "msg_1", callID: "call_1" };

describe("what a permission prompt shows, laid on the linked call's input", () => {
  it("bash: the description and the whole command; edit: nothing (its prompt draws the diff); others: their metadata as text", () => {
    assert.deepEqual(shownFor({ permission: "bash", patterns: ["npm test"], always: ["npm *"], metadata: { command: "npm test && x", description: 'Step "t" of automation "n" (every 30m)', patterns: ["npm test"] } }),
      { description: 'Step "t" of automation "n" (every 30m)', command: "npm test && x" });
    assert.deepEqual(shownFor({ permission: "edit", patterns: ["a.txt"], always: ["*"], metadata: { filepath: "a.txt", diff: "..." } }), {});
    assert.deepEqual(shownFor({ permission: "background_automation", patterns: ["au1@v1"], always: ["au1@v1"], metadata: { title: "n", prompt: "step t: npm test\nagent: general", triggers: ["every 30m", "daily at 02:00"], budget: { usd: 1 } } }),
      { title: "n", prompt: "step t: npm test\nagent: general", triggers: "every 30m; daily at 02:00", budget: '{"usd":1}' });
  });

  it("every tool's asks go through the display with the call's ids; OpenCode's ask gets exactly what the tool asked", async () => {
    const shown: unknown[] = [];
    const display: ToolCallDisplay = { during: async (ref, fields, work) => (shown.push({ ref, fields }), work()) };
    const asked: Ask[] = [];
    const tools = withShownAsks({ t: { description: "", args: {}, execute: async (_args: unknown, context: { ask: (input: Ask) => Promise<void> }) => (await context.ask({ permission: "bash", patterns: ["ls"], always: ["ls *"], metadata: { command: "ls", description: "d" } }), "ok") } } as never, display);
    const out = await tools.t!.execute({} as never, { ...REF, agent: "build", abort: new AbortController().signal, ask: async (input: Ask) => void asked.push(input) } as never);
    assert.equal(out, "ok");
    assert.deepEqual(shown, [{ ref: REF, fields: { description: "d", command: "ls" } }]);
    assert.deepEqual(asked, [{ permission: "bash", patterns: ["ls"], always: ["ls *"], metadata: { command: "ls", description: "d" } }]);
  });
});

describe("createToolCallDisplay on the client", () => {
  function fakeClient(opts: { patchFails?: boolean } = {}) {
    const part = { id: "prt_1", messageID: REF.messageID, sessionID: REF.sessionID, type: "tool", callID: REF.callID, tool: "task_create", state: { status: "running", input: { title: "n", steps: [{ name: "t", run: "npm test" }] }, time: { start: 1 } } };
    const patches: any[] = [];
    const client = {
      session: { message: async () => ({ data: { info: {}, parts: [{ type: "text", id: "prt_0" }, structuredClone(part)] } }) },
      _client: {
        patch: async (options: any) => {
          patches.push(options);
          return opts.patchFails ? { error: { name: "BadRequest" }, response: new Response(null, { status: 400 }) } : { data: options.body, response: new Response(null, { status: 200 }) };
        },
      },
    };
    return { client, patches, part };
  }

  it("shows the fields while the prompt is open and gives the model's own input back afterwards, also when the user rejects", async () => {
    const { client, patches, part } = fakeClient();
    const display = createToolCallDisplay(client as never, () => assert.fail("no error expected"));
    let during: any[] = [];
    await assert.rejects(display.during(REF, { command: "npm test", description: "Step" }, async () => {
      during = [...patches];
      throw new Error("rejected");
    }), /rejected/);
    assert.equal(during.length, 1, "shown before the prompt");
    assert.deepEqual(during[0].path, { sessionID: REF.sessionID, messageID: REF.messageID, partID: "prt_1" });
    assert.deepEqual(during[0].body.state.input, { ...part.state.input, command: "npm test", description: "Step" });
    assert.equal(during[0].body.state.status, "running");
    assert.equal(patches.length, 2);
    assert.deepEqual(patches[1].body.state.input, part.state.input, "the model's own arguments again");
  });

  it("a host that refuses changes nothing but what is shown: the prompt is asked all the same", async () => {
    const { client, patches } = fakeClient({ patchFails: true });
    const errors: string[] = [];
    const display = createToolCallDisplay(client as never, (message) => errors.push(message));
    assert.equal(await display.during(REF, { command: "x" }, async () => "answered"), "answered");
    assert.equal(patches.length, 1, "no restore of what was never laid");
    assert.deepEqual(errors, ["Could not show what a permission prompt is about"]);
  });
});
