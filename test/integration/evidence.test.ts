import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { launchTask, startStack, call, pluginDbPath, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";
import { main } from "../../src/cli/main.ts";
import { defaultResponder, isToolResult, lastUserText, type MockReply, type MockRequest } from "../harness/mock-model.ts";

/**
 * On top of the mock's directives, for children that must act on their own later:
 *   THEN <text>          the answer once the tool results are back (instead of DONE + outputs)
 *   ON_CONTINUE <CALL>   the tool call made when the plugin sends the child back to work
 *   LOOP <tool> <json>   that tool call at every step, forever
 * They sit in the child's first prompt; inside the parent's background_task call they are
 * escaped JSON, not lines of their own, so the parent's model never acts on them.
 */
function responder(req: MockRequest): MockReply | Promise<MockReply> {
  if (req.isTitle) return defaultResponder(req);
  const first = req.body.messages.find((m) => m.role === "user");
  const firstText = typeof first?.content === "string" ? first.content : (first?.content ?? []).map((p) => p.text ?? "").join("\n");
  const loop = /^LOOP (\S+) (.*)$/m.exec(firstText);
  if (loop) return { toolCalls: [{ name: loop[1]!, args: JSON.parse(loop[2]!) }] };
  const then = /^THEN (.*)$/m.exec(firstText);
  if (then && isToolResult(req)) return { text: then[1]! };
  const onContinue = /^ON_CONTINUE CALL (\S+) (.*)$/m.exec(firstText);
  if (onContinue && lastUserText(req).startsWith("This task is not done yet") && !isToolResult(req)) {
    return { toolCalls: [{ name: onContinue[1]!, args: JSON.parse(onContinue[2]!) }] };
  }
  return defaultResponder(req);
}

describe("evidence on the real host", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({
      responder,
      pluginOptions: { pollIntervalMs: 500, maxContinuations: 2, stalledLoopLimit: 5 },
      config: { permission: { bash: { "*": "allow", "echo forbidden*": "deny" } } }, // the last matching rule wins
    });
  });
  after(async () => {
    await stack?.stop();
  });

  /** Launches one task from a parent of its own (so each gets its own notification) and returns both ids. */
  async function launch(title: string, prompt: string, extra: Record<string, unknown> = {}): Promise<{ parent: string; id: string }> {
    const parent = await stack.newSession(`parent: ${title}`);
    return { parent, id: await launchTask(stack, parent, { description: title, prompt, ...extra }) };
  }

  const settled = (parent: string, id: string) =>
    waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(`task_id="${id}" status=`)), { timeoutMs: 60_000, what: `notification for ${id}` });

  async function output(parent: string, args: Record<string, unknown>): Promise<string> {
    const before = (await toolOutputs(stack, parent, "background_output")).length;
    await stack.say(parent, call("background_output", args));
    return (await toolOutputs(stack, parent, "background_output"))[before]!;
  }

  it("evidence, contradictions, expect, loops and milestones, all on one server", async () => {
    const write = (path: string, content: string) => call("write", { filePath: path, content });
    const [writer, claimer, tester, fixer, idler, commander, looper, follower] = await Promise.all([
      launch("writer", write("report.md", "# Report\nall good\n")),
      launch("claimer", "REPLY I wrote summary.md with the results. All done."),
      launch("tester", `${call("bash", { command: "npm test", description: "run the tests" })}\nTHEN All tests pass.`),
      launch("fixer", `REPLY done\nON_CONTINUE ${write("fixed.md", "fixed\n")}`, { expect: { files: ["fixed.md"] } }),
      launch("idler", "REPLY done", { expect: { files: ["never.md"] } }),
      launch("commander", `REPLY done\nON_CONTINUE ${write("flag.txt", "ok\n")}`, { expect: { command: "echo checking; test -s flag.txt" } }),
      launch("looper", `LOOP bash ${JSON.stringify({ command: "echo again", description: "again" })}`),
      launch("follower", write("followed.md", "x\n"), { expect: { files: ["followed.md"] }, milestones: true }),
    ]);

    // expect.command obeys the user's bash permission rules.
    const denied = await stack.newSession("parent: denied command");
    await stack.say(denied, call("background_task", { description: "denied", prompt: "REPLY x", agent: "general", expect: { command: "echo forbidden thing" } }));
    const [refusal] = await toolOutputs(stack, denied, "background_task");
    assert.match(refusal!, /Running `echo forbidden thing` after the task was not allowed \(bash permission\)/);

    // A child that really wrote a file: listed, verified against the file before the write (tool.execute.before).
    const written = await settled(writer.parent, writer.id);
    assert.match(written, /status="completed"/);
    assert.match(written, /Evidence: Files: report\.md \(created, 18 B, verified\)/);
    assert.doesNotMatch(written, /WARNING/);
    assert.equal(readFileSync(join(stack.server.projectDir, "report.md"), "utf8"), "# Report\nall good\n");
    const full = await output(writer.parent, { task_id: writer.id, evidence: true });
    assert.match(full, /report\.md — created \(write 1x\); exists, 18 B, sha256 [0-9a-f]{12}…; verified \(compared with the file before the first write\)/);

    // Claims without evidence are flagged plainly.
    const claimed = await settled(claimer.parent, claimer.id);
    assert.match(claimed, /WARNING: the result says summary\.md was written, but summary\.md does not exist\./);
    const tested = await settled(tester.parent, tester.id);
    assert.match(tested, /Commands: npm test \(exit [1-9]\d*\)/);
    assert.match(tested, /WARNING: the result says the tests pass, but the last test command \(npm test\) exited with [1-9]/);

    // expect files: one continuation, then the child writes the file and the task completes.
    const fixed = await settled(fixer.parent, fixer.id);
    assert.match(fixed, /status="completed"/);
    assert.match(fixed, /fixed\.md \(created, 6 B, verified\)/);
    const fixerPrompts = (await stack.messages(fixer.id)).filter((m) => m.info.role === "user").map((m) => m.parts.map((p) => p.text ?? "").join(""));
    assert.equal(fixerPrompts.length, 2);
    assert.match(fixerPrompts[1]!, /fixed\.md does not exist\.[\s\S]*continuation 1 of 2/);
    let shown = "";
    const io = { stdout: (t: string) => void (shown += t), stderr: (t: string) => void (shown += t), env: {}, now: Date.now };
    assert.equal(main(["show", fixer.id, "--db", pluginDbPath(stack.server)], io), 0, shown);
    assert.match(shown, /continued\s+continuation 1 of 2: fixed\.md does not exist\./, "the continuation is in the timeline");
    assert.match(shown, /Evidence of run 0 \(first run\):\n  Files:\n    fixed\.md — created \(write 1x\); exists, 6 B/);

    // Never met: evidence_missing after two continuations.
    const missing = await settled(idler.parent, idler.id);
    assert.match(missing, /status="error"/);
    assert.match(missing, /evidence_missing: after 2 continuation\(s\) the expectation still fails: never\.md does not exist\./);
    assert.equal((await stack.messages(idler.id)).filter((m) => m.info.role === "user").length, 3);

    // expect command: exit code and output go to the child; it fixes it; the command passes.
    const commanded = await settled(commander.parent, commander.id);
    assert.match(commanded, /status="completed"/);
    const commanderPrompts = (await stack.messages(commander.id)).filter((m) => m.info.role === "user").map((m) => m.parts.map((p) => p.text ?? "").join(""));
    assert.match(commanderPrompts[1]!, /`echo checking; test -s flag\.txt` exited with 1\. Last 40 lines of its output:\nchecking/);
    assert.ok(existsSync(join(stack.server.projectDir, "flag.txt")));

    // A looping child is stopped.
    const looped = await settled(looper.parent, looper.id);
    assert.match(looped, /status="error"/);
    assert.match(looped, /stalled_loop: the child repeated the same tool call 5 times in a row: bash \{"command":"echo again"/);

    // Milestones: in order, and none of them started a parent turn.
    const finalNote = await settled(follower.parent, follower.id);
    assert.match(finalNote, /status="completed"/);
    const parentMessages = await stack.messages(follower.parent);
    const texts = parentMessages.map((m) => ({ role: m.info.role, text: m.parts.map((p) => p.text ?? "").join("") }));
    const order = texts.flatMap((m) => [...m.text.matchAll(/milestone="(\w+)"|task_id="[^"]+" status="(\w+)"/g)].map((x) => x[1] ?? `notification:${x[2]}`));
    assert.deepEqual(order, ["started", "evidence_verified", "completed", "notification:completed"]);
    texts.forEach((m, i) => {
      const onlyMilestones = m.role === "user" && m.text.includes("milestone=") && !/ status="/.test(m.text);
      if (onlyMilestones) assert.notEqual(texts[i + 1]?.role, "assistant", `a milestone notice started a parent turn: ${m.text}`);
    });
  });
});
