import { after, afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GithubEventName } from "../../src/automations/automation.ts";
import type { RunningSource, SourceContext, TriggerEvent } from "../../src/triggers/trigger-source.ts";
import { githubToken, resolveGithubRepo, startGithubSource, UNAUTHENTICATED_NOTE, type GithubSpec } from "../../src/triggers/github-source.ts";
import { startFakeGithub, type FakeGithub, type FakeGithubOptions } from "../harness/fake-github.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor } from "../helpers/wait-for.ts";

const TOKEN = "ghp_testtoken123";
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempDir = mkdtempSync(join(tmpdir(), "github-source-"));
after(() => rmSync(tempDir, { recursive: true, force: true }));

// Every source here polls on a fake clock of its fake GitHub's, which lives in the same time
// (its request stamps and rate-limit resets); a test moves time one poll at a time.
const clocks = new WeakMap<FakeGithub, FakeClock>();
const clockOf = (fake: FakeGithub) => clocks.get(fake)!;

async function fakeGithub(options: FakeGithubOptions = {}): Promise<FakeGithub> {
  const clock = new FakeClock();
  const fake = await startFakeGithub({ limit: 1_000_000, now: () => clock.now(), ...options });
  clocks.set(fake, clock);
  cleanups.push(() => fake.close());
  return fake;
}

/** A source context that keeps what the source emits, notes and logs; `stored` is its saved state. */
function context(clock: FakeClock, stored?: unknown, directory = tempDir) {
  const box = { events: [] as TriggerEvent[], notes: [] as Array<string | undefined>, logs: [] as string[], stored };
  const ctx: SourceContext = {
    directory,
    emit: (event) => box.events.push(event),
    loadState: () => box.stored,
    saveState: (state) => (box.stored = JSON.parse(JSON.stringify(state))),
    setNote: (note) => box.notes.push(note),
    log: (level, message) => box.logs.push(`${level}: ${message}`),
    clock,
    ownWrites: () => new Set(),
  };
  return { ctx, ...box, get box() { return box; } };
}

type Started = { source: RunningSource; box: ReturnType<typeof context>["box"] };

async function start(fake: FakeGithub, events: GithubEventName[], opts: { ref?: string; token?: string | null; stored?: unknown; repo?: string; directory?: string; everyMs?: number; conditional?: boolean } = {}): Promise<Started> {
  const { ctx, box } = context(clockOf(fake), opts.stored, opts.directory);
  const spec: GithubSpec = { kind: "github", repo: opts.repo ?? fake.repo, events, ref: opts.ref, every: "100ms", everyMs: opts.everyMs ?? 100 };
  const token = opts.token === null ? undefined : (opts.token ?? TOKEN);
  const source = await startGithubSource(spec, ctx, { apiUrl: fake.url, token: async () => token, conditional: opts.conditional, requestTimeoutMs: REQUEST_TIMEOUT_MS });
  cleanups.push(() => source.stop());
  return { source, box };
}

/** A request's abort timer is this far off, further than any poll. */
const REQUEST_TIMEOUT_MS = 86_400_000;

async function clockedGithub(options: FakeGithubOptions = {}): Promise<{ fake: FakeGithub; clock: FakeClock }> {
  const fake = await fakeGithub(options);
  return { fake, clock: clockOf(fake) };
}

/**
 * Waits until the source on `clock` is done with its poll (its requests are answered over real
 * HTTP) and waits for the next one; returns the delay until then.
 */
async function waiting(clock: FakeClock): Promise<number> {
  const next = await waitFor(() => {
    const inMs = clock.nextTimerIn();
    return clock.pendingTimers() === 1 && inMs !== undefined && inMs < REQUEST_TIMEOUT_MS && { inMs };
  }, "the source to wait for its next poll");
  return next.inMs;
}

/** Lets the next poll happen; returns the delay the source chose after it. */
async function poll(clock: FakeClock): Promise<number> {
  await clock.advance(await waiting(clock));
  return waiting(clock);
}

/** Polls until `done`, at most 20 times. */
async function until(fake: FakeGithub, done: () => boolean, what: string): Promise<void> {
  for (let polls = 0; !done(); polls++) {
    if (polls === 20) throw new Error(`not after 20 polls: ${what}`);
    await poll(clockOf(fake));
  }
}

/** Every listing the source polls has answered 304 at least once: its baseline is recorded and unchanged. */
async function settled(fake: FakeGithub, paths: string[]): Promise<void> {
  await until(fake, () => paths.every((p) => fake.requestsTo(`/repos/${fake.repo}/${p}`).some((r) => r.status === 304)), `304s on ${paths.join(", ")}`);
}

/** `count` more requests reached the fake. */
async function morePolls(fake: FakeGithub, count: number): Promise<void> {
  const target = fake.requests.length + count;
  await until(fake, () => fake.requests.length >= target, `${count} more requests`);
}

describe("github source: baseline and new items", () => {
  it("the first poll records what exists and fires nothing, for every event kind", async () => {
    const fake = await fakeGithub();
    const all: GithubEventName[] = ["push", "pr_opened", "pr_merged", "pr_review", "ci_complete", "ci_failed", "issue_opened", "issue_comment", "release"];
    const { box } = await start(fake, all);
    await settled(fake, ["pulls", "events", "issues?", "issues/comments", "releases", "branches/main", "actions/runs"]);
    assert.deepEqual(box.events, [], "the seeded PRs, review, issue, comment, release, head and runs are the baseline");
    assert.equal(fake.requests.filter((r) => r.path === `/repos/${fake.repo}`).length, 1, "the default branch is asked once");
  });

  it("pr_opened fires once per new PR with its number, title, author and URL", async () => {
    const fake = await fakeGithub();
    const { box } = await start(fake, ["pr_opened"]);
    await settled(fake, ["pulls"]);
    const a = fake.openPull({ title: "Fix login", author: "ada" });
    const b = fake.openPull({ title: "Add\nlogout", author: "grace" });
    await until(fake, () => box.events.length >= 2, "two PR events");
    await morePolls(fake, 3);
    assert.deepEqual(box.events.map((e) => e.summary), [`new PR #${a} "Fix login" by ada`, `new PR #${b} "Add logout" by grace`]);
    assert.match(box.events[0]!.data!, new RegExp(`url: https://github.example/${fake.repo}/pull/${a}`));
    assert.equal(box.events[0]!.caughtUp, undefined);
  });

  it("unchanged listings are asked with If-None-Match, answer 304 and cost no rate limit", async () => {
    const fake = await fakeGithub();
    const { box } = await start(fake, ["pr_opened", "ci_failed"], { ref: "main" });
    await settled(fake, ["pulls", "actions/runs"]);
    const costlyAfterBaseline = fake.stats.costly;
    const from = fake.requests.length;
    await morePolls(fake, 10);
    const later = fake.requests.slice(from);
    assert.ok(later.every((r) => r.status === 304 && r.ifNoneMatch), "every later poll is conditional and unchanged");
    assert.equal(fake.stats.costly, costlyAfterBaseline, "no request after the baseline cost rate limit");
    assert.equal(costlyAfterBaseline, 2, "the baseline: one 200 per listing");
    assert.deepEqual(box.events, []);
  });

  it("each kind fires once with what it is about", async () => {
    const fake = await fakeGithub();
    const all: GithubEventName[] = ["push", "pr_merged", "pr_review", "issue_opened", "issue_comment", "release"];
    const { box } = await start(fake, all);
    await settled(fake, ["pulls", "events", "issues?", "issues/comments", "releases", "branches/main"]);
    const pr = fake.openPull({ title: "Speed up build", author: "ada" });
    fake.addReview(pr, { author: "linus", state: "changes_requested", body: "Please split this." });
    fake.mergePull(pr);
    const issue = fake.openIssue({ title: "Crash on start", author: "ken" });
    fake.comment(issue, { author: "grace", body: "I see it too:\nstack trace here" });
    const draft = fake.publishRelease({ tag: "v2.0.0", name: "Two", author: "ada", draft: true });
    const sha = fake.push("main", { message: "Merge speed-up\n\nlong body", author: "ada" });
    await until(fake, () => box.events.length >= 5, "five events");
    await morePolls(fake, 6);
    assert.ok(!box.events.some((e) => e.summary.includes("release")), "a draft release does not fire");
    fake.publishDraft(draft);
    await until(fake, () => box.events.length >= 6, "the release once published");
    await morePolls(fake, 8);
    assert.deepEqual(box.events.map((e) => e.summary).sort(), [
      `PR #${pr} "Speed up build" by ada merged`,
      `new comment on #${issue} by grace: "I see it too: stack trace here"`,
      `new issue #${issue} "Crash on start" by ken`,
      `new release v2.0.0 "Two" by ada`,
      `push to main by ada: ${sha.slice(0, 7)} "Merge speed-up"`,
      `review on PR #${pr} "Speed up build" by linus: changes requested`,
    ].sort(), "each once, nothing twice");
    const comment = box.events.find((e) => e.summary.startsWith("new comment"))!;
    assert.match(comment.data!, /url: https:\/\/github\.example\/acme\/widgets\/issues\/\d+#issuecomment-\d+/);
    assert.match(comment.data!, /stack trace here/);
  });

  it("only the chosen events fire, and only the listings they need are polled", async () => {
    const fake = await fakeGithub();
    const { box } = await start(fake, ["issue_opened"]);
    await settled(fake, ["issues?"]);
    const pr = fake.openPull({ title: "Not an issue", author: "ada" });
    fake.mergePull(pr);
    fake.addRun({ conclusion: "failure" });
    fake.publishRelease({ tag: "v9", author: "ada" });
    fake.comment(pr, { author: "ada", body: "hi" });
    const issue = fake.openIssue({ title: "Real issue", author: "ken" });
    await until(fake, () => box.events.length >= 1, "the issue event");
    await morePolls(fake, 3);
    assert.deepEqual(box.events.map((e) => e.summary), [`new issue #${issue} "Real issue" by ken`], "the PR in the issues listing does not fire");
    assert.ok(fake.requests.every((r) => r.path.startsWith(`/repos/${fake.repo}/issues?`)), "nothing but the issues listing is asked");
  });

  it("ci_failed fires for a failed run on the ref only; ci_complete uses the default branch when no ref is given", async () => {
    const fake = await fakeGithub();
    const { box } = await start(fake, ["ci_failed"], { ref: "main" });
    await settled(fake, ["actions/runs"]);
    fake.addRun({ branch: "topic-x", conclusion: "failure" });
    fake.addRun({ conclusion: "success" });
    fake.addRun({ conclusion: "cancelled" });
    const run = fake.startRun({ title: "Fix flaky test" });
    await morePolls(fake, 2);
    fake.finishRun(run, "failure");
    await until(fake, () => box.events.length >= 1, "the failed run");
    fake.rerun(run);
    fake.finishRun(run, "timed_out");
    await until(fake, () => box.events.length >= 2, "the failed re-run");
    await morePolls(fake, 3);
    assert.match(box.events[0]!.summary, /^CI failed on main: CI #\d+ "Fix flaky test" \(failure\)$/);
    assert.match(box.events[1]!.summary, /\(timed_out\)$/);
    assert.equal(box.events.length, 2);
    assert.ok(fake.requests.every((r) => r.path.includes("branch=main")), "runs are asked for the ref; the repository is never asked for its default branch");

    const trunk = await fakeGithub({ defaultBranch: "trunk" });
    const complete = await start(trunk, ["ci_complete"]);
    await settled(trunk, ["actions/runs"]);
    trunk.addRun({ conclusion: "success", title: "Green" });
    await until(trunk, () => complete.box.events.length >= 1, "the finished run");
    assert.match(complete.box.events[0]!.summary, /^CI finished on trunk: CI #\d+ "Green" \(success\)$/);
    assert.equal((complete.box.stored as { defaultBranch?: string }).defaultBranch, "trunk", "kept in the state: not asked again after a restart");
  });
});

describe("github source: the ref in the request", () => {
  it("an odd-but-valid ref reaches GitHub percent-encoded per path segment, never as a path of its own", async () => {
    const fake = await fakeGithub();
    await start(fake, ["push"], { ref: "feature/a#b%c" });
    await until(fake, () => fake.requests.length >= 1, "a poll");
    const paths = fake.requests.map((r) => r.path);
    assert.equal(paths[0], `/repos/${fake.repo}/branches/feature/a%23b%25c`);
    assert.ok(paths.every((p) => p.startsWith(`/repos/${fake.repo}/`)), paths.join(" "));
  });
});

describe("github source: restarts", () => {
  it("what happened while stopped fires once after the restart, marked caught up; nothing repeats", async () => {
    const { fake, clock } = await clockedGithub();
    const events: GithubEventName[] = ["pr_opened", "issue_opened", "ci_failed"];
    const first = await start(fake, events, { ref: "main" });
    await poll(clock); // the baseline
    const live = fake.openPull({ title: "Before the restart", author: "ada" });
    await poll(clock);
    assert.equal(first.box.events.length, 1, "the live event");
    await first.source.stop();
    assert.equal(clock.pendingTimers(), 0, "a stopped source keeps no timer");
    const afterStop = fake.requests.length;

    const pr = fake.openPull({ title: "While down", author: "grace" });
    const issue = fake.openIssue({ title: "Also while down", author: "ken" });
    fake.addRun({ conclusion: "failure", title: "Broke it" });
    await clock.advance(60_000);
    assert.equal(fake.requests.length, afterStop, "a stopped source asks nothing");

    const second = await start(fake, events, { ref: "main", stored: first.box.stored });
    await poll(clock);
    assert.equal(second.box.events.length, 3, "three caught-up events");
    const newer = fake.openPull({ title: "After the restart", author: "ada" });
    for (let i = 0; i < 3; i++) await poll(clock);

    assert.deepEqual(first.box.events.map((e) => e.summary), [`new PR #${live} "Before the restart" by ada`]);
    const caught = second.box.events.slice(0, 3);
    assert.deepEqual(caught.map((e) => e.summary).sort(), [
      `new PR #${pr} "While down" by grace`,
      `new issue #${issue} "Also while down" by ken`,
      caught.find((e) => e.summary.startsWith("CI failed"))?.summary ?? "missing CI event",
    ].sort());
    assert.ok(caught.every((e) => e.caughtUp === true));
    assert.deepEqual(second.box.events.slice(3).map((e) => [e.summary, e.caughtUp]), [[`new PR #${newer} "After the restart" by ada`, undefined]]);
  });

  it("the seen state stays bounded", async () => {
    const fake = await fakeGithub();
    const { box } = await start(fake, ["issue_comment"]);
    await settled(fake, ["issues/comments"]);
    const issue = fake.openIssue({ title: "Busy", author: "ken" });
    for (let round = 0; round < 8; round++) {
      for (let i = 0; i < 50; i++) fake.comment(issue, { author: "bot", body: `comment ${round}-${i}` });
      const target = 50 * (round + 1);
      await until(fake, () => box.events.length >= target, `${target} comments`);
    }
    assert.equal(box.events.length, 400);
    const feeds = (box.stored as { feeds: Record<string, { seen: string[] }> }).feeds;
    assert.equal(Object.values(feeds)[0]!.seen.length, 300);
  });
});

describe("github source: rate limits, errors and tokens", () => {
  it("a 403 with x-ratelimit-remaining 0 waits until x-ratelimit-reset: no request in between", async () => {
    const { fake, clock } = await clockedGithub();
    const { box } = await start(fake, ["pr_opened"]);
    await poll(clock);
    fake.limitNext(1, { resetInSeconds: 1 });
    const wait = await poll(clock);
    const limited = fake.requests.at(-1)!;
    assert.equal(limited.status, 403);
    assert.equal(clock.now() + wait, limited.resetSent! * 1000 + 1000, "the next request is due a second after the reset");
    assert.ok(box.notes.some((n) => n?.startsWith("rate limited by GitHub until")), "the wait is noted");
    await clock.advance(wait - 1);
    assert.equal(fake.requests.at(-1), limited, "no request before the reset");
    await poll(clock);
    assert.deepEqual(fake.requests.slice(-1).map((r) => [r.status, r.at - limited.resetSent! * 1000]), [[304, 1000]]);
    assert.equal(box.notes.at(-1), undefined, "the note cleared once polling works again");
  });

  it("a 429 with retry-after waits that long", async () => {
    const { fake, clock } = await clockedGithub();
    await start(fake, ["release"]);
    await poll(clock);
    fake.limitNext(1, { status: 429, retryAfterSeconds: 7 });
    assert.equal(await poll(clock), 7_000);
    assert.equal(fake.requests.at(-1)!.status, 429);
  });

  it("a budget that would not last until its reset spreads the polls", async () => {
    const { fake, clock } = await clockedGithub({ limit: 10 });
    await start(fake, ["pr_opened"], { token: null });
    const wait = await poll(clock);
    assert.equal(fake.requests.length, 1);
    // 9 requests left for the 3,601 s until the reset (and its second of slack): one every 400 s, not every 100 ms.
    assert.equal(Math.round(wait), Math.round(3_601_000 / 9));
  });

  it("X-Poll-Interval longer than every is honoured", async () => {
    const { fake, clock } = await clockedGithub();
    fake.pollInterval = 1;
    await start(fake, ["pr_review"]);
    assert.equal(await poll(clock), 1000);
  });

  it("server errors back off exponentially and recover", async () => {
    const { fake, clock } = await clockedGithub();
    const { box } = await start(fake, ["pr_opened"]);
    await poll(clock);
    fake.failNext(3);
    const delays = [await poll(clock), await poll(clock), await poll(clock), await poll(clock)];
    assert.deepEqual(fake.requests.slice(-4).map((r) => r.status), [502, 502, 502, 304]);
    assert.deepEqual(delays, [200, 400, 800, 100], "2x, 4x, 8x every, then every again");
    const pr = fake.openPull({ title: "After errors", author: "ada" });
    await poll(clock);
    assert.ok(box.events.some((e) => e.summary.includes(`#${pr}`)), "events after recovery");
    assert.ok(box.logs.some((l) => l.startsWith("warn: github acme/widgets: GitHub answered 502")));
  });

  it("stop() clears the timer and aborts the request in flight", async () => {
    const { fake, clock } = await clockedGithub();
    fake.latencyMs = 10_000;
    const { source, box } = await start(fake, ["pr_opened"]);
    await clock.advance(0);
    await waitFor(() => fake.requests.length >= 1, "the first request");
    const began = Date.now();
    await source.stop();
    assert.ok(Date.now() - began < 1000, "stop does not wait for the slow answer");
    assert.equal(clock.pendingTimers(), 0, "no poll and no request timeout left");
    await clock.advance(60_000);
    assert.equal(fake.requests.length, 1);
    assert.deepEqual(box.events, []);
    assert.ok(!box.logs.some((l) => l.startsWith("warn")), "an abort on stop is not an error");
  });

  it("the token goes as Authorization: Bearer; without one the source notes it runs unauthenticated", async () => {
    const fake = await fakeGithub();
    const authed = await start(fake, ["release"]);
    await settled(fake, ["releases"]);
    assert.ok(fake.requests.every((r) => r.authorization === `Bearer ${TOKEN}`));
    assert.ok(!authed.box.notes.includes(UNAUTHENTICATED_NOTE));
    assert.ok(!authed.box.logs.some((l) => l.includes(TOKEN)), "the token is never logged");

    const anonymous = await fakeGithub();
    const anon = await start(anonymous, ["release"], { token: null });
    await settled(anonymous, ["releases"]);
    assert.ok(anonymous.requests.every((r) => r.authorization === undefined));
    assert.deepEqual(anon.box.notes, [UNAUTHENTICATED_NOTE]);
  });

  it("a wrong repository is noted with the fix, and nothing throws", async () => {
    const fake = await fakeGithub();
    const { box } = await start(fake, ["pr_opened"], { repo: "acme/missing" });
    await until(fake, () => box.notes.some((n) => n?.includes("acme/missing not found")), "the note");
  });
});

describe("github repository and token lookup", () => {
  function gitRepo(origin?: string): string {
    const dir = mkdtempSync(join(tempDir, "repo-"));
    execFileSync("git", ["init", "-q"], { cwd: dir });
    if (origin) execFileSync("git", ["remote", "add", "origin", origin], { cwd: dir });
    return dir;
  }

  it('"." resolves from the origin remote (https and ssh forms)', async () => {
    for (const origin of ["https://github.com/acme/widgets.git", "https://github.com/acme/widgets", "git@github.com:acme/widgets.git", "ssh://git@github.com:22/acme/widgets.git", "https://x-token:secret@ghe.example.com/acme/widgets.git"])
      assert.equal(await resolveGithubRepo(".", gitRepo(origin)), "acme/widgets", origin);
  });

  it('"." without an origin, and a value that is not owner/repo, get errors naming the fix', async () => {
    await assert.rejects(resolveGithubRepo(".", gitRepo()), /git remote add origin/);
    await assert.rejects(resolveGithubRepo(".", tempDir), /"owner\/repo"/);
    await assert.rejects(resolveGithubRepo(".", gitRepo("https://gitlab.com/group/sub/project.git")), (error: Error) => /not a GitHub repository URL/.test(error.message));
    await assert.rejects(resolveGithubRepo(".", gitRepo("https://user:hunter2@example.com/a/b/c")), (error: Error) => !error.message.includes("hunter2"));
    await assert.rejects(resolveGithubRepo("widgets", tempDir), /give it as "owner\/repo"/);
    assert.equal(await resolveGithubRepo(" octo-cat/hello.world ", tempDir), "octo-cat/hello.world");
  });

  it('a source on "." polls the repository of the project\'s origin', async () => {
    const fake = await fakeGithub();
    await start(fake, ["release"], { repo: ".", directory: gitRepo("git@github.com:acme/widgets.git") });
    await settled(fake, ["releases"]);
  });

  it("githubToken: GITHUB_TOKEN, else gh auth token, else undefined", async () => {
    const gh = join(tempDir, "gh");
    writeFileSync(gh, `#!/bin/sh\n[ "$1 $2" = "auth token" ] && echo "gho_fromgh $3 $4"\n`);
    chmodSync(gh, 0o755);
    assert.equal(await githubToken({ env: { GITHUB_TOKEN: "ghp_env" }, gh }), "ghp_env");
    assert.equal(await githubToken({ env: {}, gh }), "gho_fromgh");
    assert.equal(await githubToken({ env: {}, gh, apiUrl: "https://ghe.example.com/api/v3" }), "gho_fromgh --hostname ghe.example.com");
    assert.equal(await githubToken({ env: {}, gh: join(tempDir, "no-such-gh") }), undefined);
    const slow = join(tempDir, "slow-gh");
    writeFileSync(slow, "#!/bin/sh\nsleep 5\necho late\n");
    chmodSync(slow, 0o755);
    const began = Date.now();
    assert.equal(await githubToken({ env: {}, gh: slow, timeoutMs: 200 }), undefined);
    assert.ok(Date.now() - began < 2000);
  });
});
