import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, type Stack, queryDb } from "../harness/plugin-stack.ts";
import { lastUserText, startMockModel, type MockModel } from "../harness/mock-model.ts";
import { startFakeGithub, type FakeGithub, type FakeRequest } from "../harness/fake-github.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";

const TOKEN = "ghp_faketokenfortests0123456789abcdef";
const TITLE = "new PRs";
const CAUGHT_UP = " (caught up: it happened while no OpenCode process was watching)";

/**
 * A `github` trigger on a real OpenCode, polling the fake GitHub API every second with a token
 * from the server's environment: baseline, one run per new PR, 304s while nothing changes, the
 * wait a rate-limited 403 asks for, and PRs opened while the server was SIGKILLed.
 */
describe("github trigger on the real host", () => {
  let github: FakeGithub;
  let mock: MockModel;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-gh-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    await github?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (reuse?: Stack) => {
    const stack = await startStack({
      mock, pluginOptions: { dbPath, githubApiUrl: github.url, pollIntervalMs: 500 },
      env: { GITHUB_TOKEN: TOKEN },
      config: { permission: { background_automation: "allow" } },
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };

  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  type RunRow = { id: number; run_no: number | null; status: string; fired_by: string; event_summary: string | null; event_data: string | null; task_id: string | null };
  const runs = (automationId: string) => query<RunRow>("SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id", automationId);
  const note = (automationId: string) => query<{ note: string | null }>("SELECT note FROM automation_triggers WHERE automation_id = ?", automationId)[0]?.note ?? null;
  const finished = (automationId: string, count: number) =>
    waitUntil(() => runs(automationId).filter((r) => r.status === "completed").length === count, { timeoutMs: 20_000, what: `${count} completed runs` });

  const pullsPath = "/repos/acme/widgets/pulls";
  const polls = () => github.requestsTo(pullsPath);
  /** Waits for `count` more polls of the pulls listing after the `since`-th one; returns them. */
  const morePolls = async (since: number, count: number): Promise<FakeRequest[]> => {
    await waitUntil(() => polls().length >= since + count, { timeoutMs: 15_000, what: `${count} more polls` });
    return polls().slice(since);
  };

  /** The first model request of run #N's child: what the child was told. */
  const childFirstRequest = (runNo: number) => {
    const head = `[Automation "${TITLE}"`;
    const request = mock.requests().find((r) => lastUserText(r).includes(head) && lastUserText(r).includes(`run #${runNo},`));
    assert.ok(request, `no model request for run #${runNo}`);
    return lastUserText(request);
  };
  const assertNamesPull = (text: string, pr: { number: number; title: string; author: string }) => {
    assert.match(text, new RegExp(`\\[Event: new PR #${pr.number} "${pr.title}" by ${pr.author}`));
    assert.ok(text.includes(`PR #${pr.number}: ${pr.title}`), text);
    assert.ok(text.includes(`author: ${pr.author}`), text);
    assert.ok(text.includes(`url: https://github.example/acme/widgets/pull/${pr.number}`), text);
  };
  const summaryOf = (pr: { number: number; title: string; author: string }) => `new PR #${pr.number} "${pr.title}" by ${pr.author}`;

  it("baseline, one run per new PR, 304s, a rate limit's reset, and PRs opened while the server was down", async () => {
    github = await startFakeGithub();
    mock = await startMockModel();
    const first = await start();
    const parent = await first.newSession("parent: github");
    await first.say(parent, call("task_create", {
      title: TITLE, prompt: "REPLY looked at the PR", notify: "never", overlap: "queue",
      triggers: [{ github: "acme/widgets", events: ["pr_opened"], every: "1s" }],
    }));
    const [out] = await toolOutputs(first, parent, "task_create");
    const id = /Created automation (au\w+)/.exec(out ?? "")?.[1];
    assert.ok(id, `task_create answered: ${out}`);

    // First poll: the seeded PRs (#1 merged, #2 open) are the baseline and fire nothing; the polls after it are 304s.
    const baseline = await morePolls(0, 4);
    assert.equal(baseline[0]!.status, 200);
    assert.equal(baseline[0]!.ifNoneMatch, undefined);
    assert.deepEqual(baseline.slice(1).map((r) => r.status), baseline.slice(1).map(() => 304));
    assert.ok(baseline.slice(1).every((r) => r.ifNoneMatch !== undefined && !r.costly), "unchanged polls send the ETag and cost no rate limit");
    assert.deepEqual(runs(id), []);
    assert.equal(note(id), null, "with a token there is no unauthenticated note");

    // Each new PR: exactly one run, whose child is told its number, title, author and URL.
    const prs: Array<{ number: number; title: string; author: string }> = [];
    for (const [i, pr] of [{ title: "Fix login redirect", author: "margaret" }, { title: "Speed up the parser", author: "alan" }].entries()) {
      const before = polls().length;
      prs.push({ number: github.openPull(pr), ...pr });
      await finished(id, i + 1);
      const after = await morePolls(before, 4); // the 200 that found it, then unchanged polls
      assert.deepEqual(after.map((r) => r.status), [200, 304, 304, 304]);
      assertNamesPull(childFirstRequest(i + 1), prs[i]!);
    }
    assert.deepEqual(runs(id).map((r) => [r.run_no, r.status, r.fired_by, r.event_summary]), [
      [1, "completed", "github", summaryOf(prs[0]!)],
      [2, "completed", "github", summaryOf(prs[1]!)],
    ]);

    // A 403 whose headers say the limit is spent until a reset: no request before the reset;
    // a PR opened meanwhile fires once after it.
    const beforeLimit = polls().length;
    github.limitNext(1, { resetInSeconds: 4 });
    const [limited] = await morePolls(beforeLimit, 1);
    assert.equal(limited!.status, 403);
    prs.push({ number: github.openPull({ title: "Rate limits", author: "grace" }), title: "Rate limits", author: "grace" });
    await waitUntil(() => /rate limited by GitHub until/.test(note(id) ?? ""), { what: "the rate-limit note" });
    const [next] = await morePolls(beforeLimit + 1, 1);
    assert.ok(next!.at >= limited!.resetSent! * 1000, `asked ${limited!.resetSent! * 1000 - next!.at} ms before the reset`);
    assert.equal(next!.status, 200);
    await finished(id, 3);
    assertNamesPull(childFirstRequest(3), prs[2]!);
    await waitUntil(() => note(id) === null, { what: "the note cleared" });

    // SIGKILL; two PRs opened while no server polls fire once each after the restart, marked caught up.
    await first.server.kill();
    first.events.close();
    for (const pr of [{ title: "While down one", author: "ken" }, { title: "While down two", author: "barbara" }]) prs.push({ number: github.openPull(pr), ...pr });
    const downPolls = polls().length;
    const second = await start(first);
    await finished(id, 5);
    const settled = await morePolls(downPolls, 4); // the catch-up 200, then nothing new
    assert.deepEqual(settled.map((r) => r.status), [200, 304, 304, 304]);
    assertNamesPull(childFirstRequest(4), prs[3]!);
    assertNamesPull(childFirstRequest(5), prs[4]!);
    assert.deepEqual(runs(id).map((r) => [r.run_no, r.status, r.event_summary]), [
      [1, "completed", summaryOf(prs[0]!)],
      [2, "completed", summaryOf(prs[1]!)],
      [3, "completed", summaryOf(prs[2]!)],
      [4, "completed", summaryOf(prs[3]!) + CAUGHT_UP],
      [5, "completed", summaryOf(prs[4]!) + CAUGHT_UP],
    ]);
    const children = runs(id).map((r) => r.task_id);
    assert.equal(new Set(children).size, 5, "one child per run");

    // Every request carried the token; unchanged polls cost nothing; the token is in no log and no row.
    assert.ok(github.requests.every((r) => r.authorization === `Bearer ${TOKEN}`), "every request carries the token");
    assert.equal(github.stats.costly, polls().filter((r) => r.status === 200).length, "only the 200s cost rate limit");
    const logs = second.server.logs() + first.server.logs() + (await second.server.logFile());
    assert.ok(!logs.includes(TOKEN), "the token is not in the server's logs");
    const rows = JSON.stringify([query("SELECT * FROM automation_runs"), query("SELECT * FROM automation_triggers")]);
    assert.ok(!rows.includes(TOKEN), "the token is not in the database");
  });

  it('a github trigger with ref "../x" is refused naming the rule; nothing is stored and GitHub is not asked', async () => {
    const stack = stacks.at(-1)!;
    const parent = await stack.newSession("parent: bad ref");
    const before = github.requests.length;
    const count = () => query<{ n: number }>("SELECT count(*) AS n FROM automations")[0]!.n;
    const automations = count();
    for (const ref of ["../x", "../../../../user/keys"]) {
      await stack.say(parent, call("task_create", { title: "bad ref", prompt: "REPLY x", triggers: [{ github: "acme/widgets", events: ["push"], ref }] }));
    }
    const outs = await toolOutputs(stack, parent, "task_create");
    assert.equal(outs.length, 2);
    for (const out of outs) assert.match(out, /"ref": "[./]+(x|user\/keys)" is not a valid branch name: it contains "\.\."/, out);
    assert.equal(count(), automations, "nothing stored");
    await new Promise((r) => setTimeout(r, 1500)); // a poll of a stored trigger would show by now
    assert.ok(github.requests.slice(before).every((r) => r.path.startsWith("/repos/acme/widgets/")), "no request outside the repository");
    assert.ok(!github.requests.some((r) => r.path.startsWith("/user")), "never /user/keys");
  });
});
