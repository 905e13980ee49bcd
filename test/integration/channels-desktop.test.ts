import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, lastUserText, startMockModel, type MockModel } from "../harness/mock-model.ts";
import { fakeProgram } from "../helpers/fake-program.ts";

/**
 * The desktop channel on a real OpenCode: `{ "desk": { "format": "desktop" } }`, no URL. A fake
 * notify-send first on the server's PATH records its arguments; an automation naming the channel
 * runs (task_run), and the fake is called once with the title and the first lines of the result.
 * Text from the model (the title, the result) reaches it as single literal arguments.
 */
describe("the desktop channel on the real host", () => {
  const fake = fakeProgram("notify-send");
  const dir = mkdtempSync(join(tmpdir(), "ocbt-desk-"));
  let mock: MockModel;
  let stack: Stack;
  let parent: string;
  after(async () => {
    await stack?.stop().catch(() => undefined);
    await mock?.close();
    fake.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  /** "REPLYJSON <json string>": the child answers with that text, newlines and all (REPLY is one line). */
  const responder = (req: Parameters<typeof defaultResponder>[0]) => {
    const m = /^REPLYJSON (.*)$/m.exec(lastUserText(req));
    return m ? { text: JSON.parse(m[1]!) as string } : defaultResponder(req);
  };

  /** task_create then task_run; resolves when the run's delivery to desk has ended. */
  async function runWith(title: string, result: string): Promise<{ id: string; delivery: any }> {
    await stack.say(parent, call("task_create", { title, prompt: `REPLYJSON ${JSON.stringify(result)}`, channels: ["desk"], notify: "always" }));
    const out = (await toolOutputs(stack, parent, "task_create")).at(-1) ?? "";
    const id = /Created automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, out);
    await stack.say(parent, call("task_run", { id }));
    const db = pluginDbPath(stack.server);
    const delivery = await waitUntil(
      () => queryDb(db, "SELECT * FROM channel_deliveries WHERE automation_id = ?", id).find((r) => r.status !== "pending"),
      { timeoutMs: 30_000, what: `the desk delivery of "${title}"` },
    );
    return { id, delivery };
  }

  it("an automation with channels [\"desk\"] runs: notify-send gets the title and the first lines, once", async () => {
    mock = await startMockModel({ responder });
    stack = await startStack({
      mock,
      config: { permission: { background_automation: "allow" } },
      env: { PATH: `${fake.dir}:${process.env.PATH}` },
      pluginOptions: { channels: { desk: { format: "desktop" } } },
    });
    parent = await stack.newSession("parent: desktop");
    const result = "All 120 checks passed\n\nslowest: parser (3 s)\nline three\nline four\nline five";
    const { id, delivery } = await runWith("Nightly report", result);
    assert.equal(delivery.status, "delivered", JSON.stringify(delivery));
    assert.equal(delivery.host, "this computer");
    assert.equal(delivery.attempts, 1);
    assert.deepEqual(fake.calls(), [
      ["--app-name=opencode-errands", "--urgency=normal", "--", "Nightly report", "All 120 checks passed\nslowest: parser (3 s)\nline three\nline four …"],
    ]);

    await stack.say(parent, call("task_read", { id }));
    const read = (await toolOutputs(stack, parent, "task_read")).at(-1) ?? "";
    assert.match(read, /^ {4}desk \(this computer\): delivered$/m, read);
    assert.match(read, /channels: desk/);
    assert.equal(fake.calls().length, 1, "still one call");
  });

  it("an attacker's title and result (a leading dash, shell metacharacters) arrive as single literal arguments", async () => {
    const pwned = join(dir, "pwned");
    const title = "--help -e $(touch PWNED)";
    const result = `-rf $(touch ${pwned}) \`touch ${pwned}2\`; echo x | tee ${pwned}3 ; exit 1 * ~ 'q' "dq" \\ --version`;
    const before = fake.calls().length;
    const { delivery } = await runWith(title, result);
    assert.equal(delivery.status, "delivered", JSON.stringify(delivery));
    const calls = fake.calls().slice(before);
    assert.deepEqual(calls, [["--app-name=opencode-errands", "--urgency=normal", "--", title, result]]);
    assert.ok(!existsSync(pwned) && !existsSync(`${pwned}2`) && !existsSync(`${pwned}3`), "no shell ran the text");
    assert.ok(!existsSync(join(stack.server.projectDir, "PWNED")));
  });
});
