/**
 * A fake GitHub REST API on 127.0.0.1 for tests and benchmarks: one repository whose pull
 * requests, issues, comments, releases, reviews, branches and Actions runs the test changes.
 *
 * Served (shapes trimmed to what a poller reads, defaults as GitHub documents them):
 *   GET /repos/{o}/{r}                      metadata (default_branch)
 *   GET /repos/{o}/{r}/pulls                state, sort (created|updated), direction, per_page
 *   GET /repos/{o}/{r}/issues               issues and PRs (PRs carry `pull_request`), newest first
 *   GET /repos/{o}/{r}/issues/comments      sort, direction (default ascending), per_page
 *   GET /repos/{o}/{r}/releases             newest first, drafts included
 *   GET /repos/{o}/{r}/branches/{branch}    head commit
 *   GET /repos/{o}/{r}/actions/runs         branch, per_page; newest first
 *   GET /repos/{o}/{r}/events               the activity feed (X-Poll-Interval when set)
 * Every answer has a content ETag; `If-None-Match` with it gives 304. As GitHub's best practices
 * say, a 304 costs no rate limit only when the request carried `Authorization`; anything else
 * costs one. `limitNext` answers the next N requests 403 (or 429) with `x-ratelimit-remaining: 0`
 * and `x-ratelimit-reset`, or with `retry-after`; `failNext` answers 502.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type FakeRequest = {
  /** `now()` (Date.now() unless the options give a clock) when it arrived. */
  at: number;
  path: string;
  status: number;
  authorization?: string;
  ifNoneMatch?: string;
  /** It counted against the rate limit. */
  costly: boolean;
  /** The x-ratelimit-reset (epoch seconds) a rate-limited answer carried. */
  resetSent?: number;
};
export type FakeGithubOptions = {
  repo?: string;
  defaultBranch?: string;
  /** Requests an hour before GitHub says 403 (default 5000 with a token, 60 without). */
  limit?: number;
  /** A few PRs, an issue, a comment, a release, a review and CI runs that exist before the first poll (default true). */
  seed?: boolean;
  /** The time the fake lives in, for `at` and `x-ratelimit-reset` (default Date.now: a test's fake clock goes here). */
  now?: () => number;
};

type Pull = { number: number; title: string; user: string; head: string; base: string; state: "open" | "closed"; merged_at: string | null; created_at: string; updated_at: string };
type Issue = { number: number; title: string; user: string; state: "open" | "closed"; created_at: string; updated_at: string };
type Comment = { id: number; issue: number; user: string; body: string; created_at: string };
type Release = { id: number; tag_name: string; name: string; author: string; draft: boolean; created_at: string; published_at: string | null };
type Run = { id: number; name: string; run_number: number; run_attempt: number; head_branch: string; head_sha: string; display_title: string; actor: string; status: "queued" | "in_progress" | "completed"; conclusion: string | null; created_at: string; updated_at: string };
type Branch = { sha: string; message: string; author: string; date: string };
type ActivityEvent = { id: string; type: string; actor: { login: string }; payload: Record<string, unknown>; created_at: string };
type Limit = { count: number; status: 403 | 429; resetInSeconds?: number; retryAfterSeconds?: number };

export class FakeGithub {
  readonly repo: string;
  readonly defaultBranch: string;
  url = "";
  /** Every request, in order. */
  readonly requests: FakeRequest[] = [];
  /** Seconds sent as X-Poll-Interval on /events (GitHub sends 60). */
  pollInterval: number | undefined;
  /** Milliseconds every answer waits before it is sent. */
  latencyMs = 0;
  private readonly limit: number | undefined;
  private readonly seeded: boolean;
  private readonly used = { authenticated: 0, anonymous: 0 };
  private readonly now: () => number;
  private readonly windowReset: number;
  private limitQueue: Limit | undefined;
  private failures = 0;
  private nextNumber = 1;
  private nextId = 1000;
  private readonly pulls: Pull[] = [];
  private readonly issues: Issue[] = [];
  private readonly comments: Comment[] = [];
  private readonly releases: Release[] = [];
  private readonly runs: Run[] = [];
  private readonly branches = new Map<string, Branch>();
  private readonly events: ActivityEvent[] = [];
  private readonly server = createServer((req, res) => this.handle(req, res));

  constructor(options: FakeGithubOptions = {}) {
    this.repo = options.repo ?? "acme/widgets";
    this.defaultBranch = options.defaultBranch ?? "main";
    this.limit = options.limit;
    this.seeded = options.seed !== false;
    this.now = options.now ?? Date.now;
    this.windowReset = Math.floor(this.now() / 1000) + 3600;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.push(this.defaultBranch, { message: "Initial commit", author: "ada" });
    if (this.seeded) this.seed();
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  get stats() {
    return {
      requests: this.requests.length,
      notModified: this.requests.filter((r) => r.status === 304).length,
      costly: this.requests.filter((r) => r.costly).length,
      limited: this.requests.filter((r) => r.status === 403 || r.status === 429).length,
    };
  }

  /** Requests whose path starts with `prefix` (e.g. "/repos/acme/widgets/pulls"). */
  requestsTo(prefix: string): FakeRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  /** The next `count` requests get 403 (or 429) saying the rate limit is spent until `resetInSeconds`, or to retry after `retryAfterSeconds`. */
  limitNext(count: number, how: { resetInSeconds?: number; retryAfterSeconds?: number; status?: 403 | 429 } = {}): void {
    this.limitQueue = { count, status: how.status ?? 403, resetInSeconds: how.resetInSeconds, retryAfterSeconds: how.retryAfterSeconds };
  }

  /** The next `count` requests get 502. */
  failNext(count: number): void {
    this.failures = count;
  }

  openPull(pull: { title: string; author: string; head?: string; base?: string }): number {
    const now = stamp();
    const number = this.nextNumber++;
    this.pulls.push({ number, title: pull.title, user: pull.author, head: pull.head ?? `topic-${number}`, base: pull.base ?? this.defaultBranch, state: "open", merged_at: null, created_at: now, updated_at: now });
    // Since October 2025 the Events API sends a trimmed PullRequestEvent: no title, author or URL.
    this.record("PullRequestEvent", pull.author, { action: "opened", number, pull_request: { number, url: this.apiUrl(`pulls/${number}`) } });
    return number;
  }

  mergePull(number: number, by = "maintainer"): void {
    const pull = this.find(this.pulls, (p) => p.number === number, `PR #${number}`);
    pull.state = "closed";
    pull.merged_at = pull.updated_at = stamp();
    this.record("PullRequestEvent", by, { action: "closed", number, pull_request: { number, url: this.apiUrl(`pulls/${number}`) } });
  }

  addReview(number: number, review: { author: string; state: "approved" | "changes_requested" | "commented"; body?: string }): void {
    const pull = this.find(this.pulls, (p) => p.number === number, `PR #${number}`);
    const id = this.nextId++;
    this.record("PullRequestReviewEvent", review.author, {
      action: "created",
      review: { id, user: { login: review.author }, state: review.state, body: review.body ?? null, html_url: `${this.webUrl(`pull/${number}`)}#pullrequestreview-${id}` },
      pull_request: this.pullJson(pull),
    });
  }

  openIssue(issue: { title: string; author: string }): number {
    const now = stamp();
    const number = this.nextNumber++;
    this.issues.push({ number, title: issue.title, user: issue.author, state: "open", created_at: now, updated_at: now });
    this.record("IssuesEvent", issue.author, { action: "opened", issue: { number, title: issue.title } });
    return number;
  }

  comment(issue: number, comment: { author: string; body: string }): number {
    const id = this.nextId++;
    this.comments.push({ id, issue, user: comment.author, body: comment.body, created_at: stamp() });
    this.record("IssueCommentEvent", comment.author, { action: "created", comment: { id, body: comment.body }, issue: { number: issue } });
    return id;
  }

  publishRelease(release: { tag: string; name?: string; author: string; draft?: boolean }): number {
    const id = this.nextId++;
    const now = stamp();
    this.releases.push({ id, tag_name: release.tag, name: release.name ?? release.tag, author: release.author, draft: release.draft ?? false, created_at: now, published_at: release.draft ? null : now });
    if (!release.draft) this.record("ReleaseEvent", release.author, { action: "published", release: { id, tag_name: release.tag } });
    return id;
  }

  /** Publishes a draft release. */
  publishDraft(id: number): void {
    const release = this.find(this.releases, (r) => r.id === id, `release ${id}`);
    release.draft = false;
    release.published_at = stamp();
  }

  push(branch: string, commit: { message: string; author: string }): string {
    const sha = createHash("sha1").update(`${branch}\n${commit.message}\n${this.nextId++}`).digest("hex");
    this.branches.set(branch, { sha, message: commit.message, author: commit.author, date: stamp() });
    this.record("PushEvent", commit.author, { ref: `refs/heads/${branch}`, head: sha });
    return sha;
  }

  /** Starts a workflow run on `branch` (default: the default branch); `finishRun` completes it. */
  startRun(run: { branch?: string; name?: string; title?: string; actor?: string } = {}): number {
    const id = this.nextId++;
    const now = stamp();
    const branch = run.branch ?? this.defaultBranch;
    const number = this.runs.filter((r) => r.name === (run.name ?? "CI")).length + 1;
    this.runs.push({ id, name: run.name ?? "CI", run_number: number, run_attempt: 1, head_branch: branch, head_sha: this.branches.get(branch)?.sha ?? "0".repeat(40), display_title: run.title ?? "Update things", actor: run.actor ?? "ada", status: "in_progress", conclusion: null, created_at: now, updated_at: now });
    return id;
  }

  finishRun(id: number, conclusion: "success" | "failure" | "cancelled" | "timed_out" | "skipped"): void {
    const run = this.find(this.runs, (r) => r.id === id, `run ${id}`);
    run.status = "completed";
    run.conclusion = conclusion;
    run.updated_at = stamp();
  }

  /** Runs a workflow again: a new attempt of the same run. */
  rerun(id: number): void {
    const run = this.find(this.runs, (r) => r.id === id, `run ${id}`);
    Object.assign(run, { run_attempt: run.run_attempt + 1, status: "in_progress", conclusion: null, updated_at: stamp() });
  }

  /** A run that starts and finishes at once. */
  addRun(run: { branch?: string; name?: string; title?: string; conclusion: "success" | "failure" | "cancelled" | "timed_out" }): number {
    const id = this.startRun(run);
    this.finishRun(id, run.conclusion);
    return id;
  }

  private seed(): void {
    const first = this.openPull({ title: "Add README", author: "ada" });
    this.mergePull(first);
    const second = this.openPull({ title: "Refactor parser", author: "grace" });
    this.addReview(second, { author: "linus", state: "commented" });
    const issue = this.openIssue({ title: "Docs are out of date", author: "ken" });
    this.comment(issue, { author: "ada", body: "Agreed." });
    this.publishRelease({ tag: "v0.1.0", author: "ada" });
    this.addRun({ conclusion: "success" });
    this.addRun({ conclusion: "failure" });
    this.addRun({ branch: "topic-x", conclusion: "failure" });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://fake");
    const entry: FakeRequest = { at: this.now(), path: url.pathname + url.search, status: 0, authorization: header(req, "authorization"), ifNoneMatch: header(req, "if-none-match"), costly: false };
    this.requests.push(entry);
    if (this.latencyMs > 0) {
      const timer = setTimeout(() => this.answer(req, res, url, entry), this.latencyMs);
      res.on("close", () => clearTimeout(timer));
    } else this.answer(req, res, url, entry);
  }

  private answer(req: IncomingMessage, res: ServerResponse, url: URL, entry: FakeRequest): void {
    const authorization = entry.authorization;
    const bucket = authorization ? "authenticated" : "anonymous";
    const limit = this.limit ?? (authorization ? 5000 : 60);
    const send = (status: number, body?: unknown, extra: Record<string, string> = {}) => {
      entry.status = status;
      entry.costly = !(status === 304 && authorization) && status !== 403 && status !== 429;
      if (entry.costly) this.used[bucket]++;
      const remaining = Math.max(0, limit - this.used[bucket]);
      res.writeHead(status, { "content-type": "application/json", "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": String(remaining), "x-ratelimit-reset": String(this.windowReset), "x-ratelimit-used": String(this.used[bucket]), ...extra });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (this.limitQueue && this.limitQueue.count > 0) return this.sendLimited(entry, res, this.limitQueue);
    if (this.used[bucket] >= limit) return this.sendLimited(entry, res, { count: 1, status: 403, resetInSeconds: this.windowReset - this.now() / 1000 });
    if (this.failures > 0) {
      this.failures--;
      return send(502, { message: "Server Error" });
    }
    if (req.method !== "GET") return send(405, { message: "Not Found" });
    const body = this.route(url);
    if (body === undefined) return send(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
    const etag = `W/"${createHash("sha1").update(JSON.stringify(body)).digest("hex")}"`;
    const extra: Record<string, string> = { etag };
    if (url.pathname.endsWith("/events") && this.pollInterval !== undefined) extra["x-poll-interval"] = String(this.pollInterval);
    if (entry.ifNoneMatch === etag) return send(304, undefined, extra);
    send(200, body, extra);
  }

  private sendLimited(entry: FakeRequest, res: ServerResponse, limit: Limit): void {
    limit.count--;
    entry.status = limit.status;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (limit.retryAfterSeconds !== undefined) headers["retry-after"] = String(limit.retryAfterSeconds);
    else {
      entry.resetSent = Math.ceil(this.now() / 1000 + (limit.resetInSeconds ?? 60));
      headers["x-ratelimit-remaining"] = "0";
      headers["x-ratelimit-reset"] = String(entry.resetSent);
    }
    res.writeHead(limit.status, headers);
    res.end(JSON.stringify({ message: limit.retryAfterSeconds !== undefined ? "You have exceeded a secondary rate limit." : "API rate limit exceeded." }));
  }

  private route(url: URL): unknown {
    const prefix = `/repos/${this.repo}`;
    if (url.pathname.toLowerCase() === prefix.toLowerCase()) return { full_name: this.repo, default_branch: this.defaultBranch, html_url: this.webUrl("") };
    if (!url.pathname.startsWith(`${prefix}/`)) return undefined;
    const rest = url.pathname.slice(prefix.length + 1);
    const q = url.searchParams;
    const perPage = Math.min(Number(q.get("per_page") ?? 30), 100);
    if (rest === "pulls") return this.listPulls(q).slice(0, perPage).map((p) => this.pullJson(p));
    if (rest === "issues") return this.listIssues().slice(0, perPage);
    if (rest === "issues/comments") return this.listComments(q).slice(0, perPage);
    if (rest === "releases") return newestFirst(this.releases).slice(0, perPage).map((r) => this.releaseJson(r));
    if (rest === "events") return newestFirst(this.events).slice(0, perPage).map((e) => ({ ...e, repo: { name: this.repo } }));
    if (rest === "actions/runs") {
      const runs = newestFirst(this.runs).filter((r) => !q.get("branch") || r.head_branch === q.get("branch"));
      return { total_count: runs.length, workflow_runs: runs.slice(0, perPage).map((r) => this.runJson(r)) };
    }
    if (rest.startsWith("branches/")) return this.branchJson(decodeURIComponent(rest.slice("branches/".length)));
    return undefined;
  }

  private listPulls(q: URLSearchParams): Pull[] {
    const state = q.get("state") ?? "open";
    const sort = q.get("sort") ?? "created";
    // GitHub: direction defaults to desc for sort=created, asc otherwise.
    const direction = q.get("direction") ?? (sort === "created" ? "desc" : "asc");
    const key = sort === "updated" ? "updated_at" : "created_at";
    const pulls = this.pulls.filter((p) => state === "all" || p.state === state);
    return sortBy(pulls, (p) => `${p[key]}|${String(p.number).padStart(8, "0")}`, direction);
  }

  private listIssues() {
    const asIssues = [
      ...this.issues.map((i) => ({ number: i.number, title: i.title, user: { login: i.user }, state: i.state, html_url: this.webUrl(`issues/${i.number}`), created_at: i.created_at, updated_at: i.updated_at })),
      ...this.pulls.map((p) => ({ number: p.number, title: p.title, user: { login: p.user }, state: p.state, html_url: this.webUrl(`pull/${p.number}`), created_at: p.created_at, updated_at: p.updated_at, pull_request: { url: this.apiUrl(`pulls/${p.number}`) } })),
    ];
    return sortBy(asIssues, (i) => `${i.created_at}|${String(i.number).padStart(8, "0")}`, "desc");
  }

  private listComments(q: URLSearchParams) {
    const direction = q.get("sort") ? (q.get("direction") ?? "desc") : "asc";
    return sortBy(this.comments, (c) => `${c.created_at}|${String(c.id).padStart(10, "0")}`, direction).map((c) => ({
      id: c.id, user: { login: c.user }, body: c.body, created_at: c.created_at, updated_at: c.created_at,
      html_url: `${this.webUrl(`issues/${c.issue}`)}#issuecomment-${c.id}`, issue_url: this.apiUrl(`issues/${c.issue}`),
    }));
  }

  private pullJson(p: Pull) {
    return { number: p.number, title: p.title, user: { login: p.user }, state: p.state, merged_at: p.merged_at, html_url: this.webUrl(`pull/${p.number}`), head: { ref: p.head }, base: { ref: p.base }, created_at: p.created_at, updated_at: p.updated_at };
  }

  private releaseJson(r: Release) {
    return { id: r.id, tag_name: r.tag_name, name: r.name, draft: r.draft, author: { login: r.author }, html_url: this.webUrl(`releases/tag/${r.tag_name}`), created_at: r.created_at, published_at: r.published_at };
  }

  private runJson(r: Run) {
    return { ...r, actor: { login: r.actor }, html_url: this.webUrl(`actions/runs/${r.id}`), event: "push" };
  }

  private branchJson(name: string) {
    const b = this.branches.get(name);
    if (!b) return undefined;
    return { name, commit: { sha: b.sha, html_url: this.webUrl(`commit/${b.sha}`), author: { login: b.author }, commit: { message: b.message, author: { name: b.author, date: b.date } } } };
  }

  private record(type: string, actor: string, payload: Record<string, unknown>): void {
    this.events.push({ id: String(this.nextId++ * 1000), type, actor: { login: actor }, payload, created_at: stamp() });
  }

  private find<T>(items: T[], match: (item: T) => boolean, what: string): T {
    const item = items.find(match);
    if (!item) throw new Error(`fake GitHub has no ${what}`);
    return item;
  }

  private apiUrl(path: string): string {
    return `${this.url}/repos/${this.repo}/${path}`;
  }

  private webUrl(path: string): string {
    return `https://github.example/${this.repo}${path ? `/${path}` : ""}`;
  }
}

export async function startFakeGithub(options: FakeGithubOptions = {}): Promise<FakeGithub> {
  return new FakeGithub(options).listen();
}

/** GitHub's timestamps: whole seconds, UTC. */
function stamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Newest first by insertion order (what GitHub's listings of releases, runs and events do). */
function newestFirst<T>(items: T[]): T[] {
  return [...items].reverse();
}

function sortBy<T>(items: T[], key: (item: T) => string, direction: string): T[] {
  const sorted = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return direction === "desc" ? sorted.reverse() : sorted;
}
