/**
 * The `github` trigger source: polls a repository's REST listings with conditional requests and
 * fires once per new PR, review, CI result, issue, comment, release or branch head.
 *
 * - The first poll of a listing records what exists and fires nothing. What the source has seen
 *   (ids, each listing's ETag) is the trigger's stored state, so after a restart what happened
 *   while no process polled fires once, marked caught up, and nothing fires twice.
 * - `If-None-Match` with the stored ETag: an unchanged listing answers 304, which costs no rate
 *   limit when the request carries a token.
 * - No request before GitHub allows one: 403/429 with `retry-after` or `x-ratelimit-remaining: 0`
 *   waits for it; a low remaining budget spreads the polls until the reset; `X-Poll-Interval`
 *   stretches the period. Network and server errors back off exponentially (5 minutes at most).
 * - Never throws: errors go to ctx.log, lasting problems to ctx.setNote.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { GithubSpec } from "./kinds/github.ts";
import type { RunningSource, SourceContext } from "./trigger-source.ts";
import { feedsFor, needsBranch, type Feed } from "./github-feeds.ts";

const run = promisify(execFile);

export const DEFAULT_GITHUB_API_URL = "https://api.github.com";
export const UNAUTHENTICATED_NOTE = "unauthenticated: GitHub allows 60 requests an hour; set GITHUB_TOKEN or run gh auth login";

export type { GithubSpec };
export type GithubSourceOptions = {
  /** REST API base URL: https://api.github.com (default), https://HOST/api/v3 for Enterprise, a fake in tests. */
  apiUrl: string;
  /** The token, looked up at start and again after a 401; undefined polls unauthenticated. */
  token?: () => Promise<string | undefined>;
  /** Send stored ETags as If-None-Match (default true; the benchmark's baseline turns it off). */
  conditional?: boolean;
  /** A request that takes longer is aborted and counts as a network error (ms, default 30,000). */
  requestTimeoutMs?: number;
};

/** Ids kept per listing: far more than a listing page holds, so nothing seen comes back as new. */
const SEEN_LIMIT = 300;
/** An item older than the newest one seen by more than this is not new, even if its id was dropped from the seen list. */
const TIME_SLACK_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 5 * 60_000;
const SECONDARY_LIMIT_WAIT_MS = 60_000;

type FeedState = { etag?: string; seen: string[]; latest?: string };
type GithubState = { defaultBranch?: string; feeds: Record<string, FeedState> };
type Answer = { status: number; body?: unknown; etag?: string };

/** GitHub allows no request before `until` (epoch ms). */
class RateLimited extends Error {
  constructor(readonly until: number) {
    super("rate limited");
  }
}

/** A failure with a note for task_read (what to fix), when there is one. */
class SourceProblem extends Error {
  constructor(message: string, readonly note?: string) {
    super(message);
  }
}

export async function startGithubSource(spec: GithubSpec, ctx: SourceContext, options: GithubSourceOptions): Promise<RunningSource> {
  const poller = new GithubPoller(spec, ctx, options);
  poller.start();
  return { stop: () => poller.stop() };
}

class GithubPoller {
  private readonly state: GithubState;
  /** Listings that had a baseline when this process started: their first poll here reports catch-up. */
  private readonly storedFeeds: Set<string>;
  private readonly polledHere = new Set<string>();
  private readonly apiUrl: string;
  private timer: unknown;
  private inFlight: AbortController | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private failures = 0;
  private repo: string | undefined;
  private token: string | undefined;
  private tokenKnown = false;
  private pollIntervalMs = 0;
  private budget: { remaining: number; resetMs: number } | undefined;
  private notes: { auth?: string; problem?: string; shown?: string } = {};

  constructor(private readonly spec: GithubSpec, private readonly ctx: SourceContext, private readonly options: GithubSourceOptions) {
    this.state = readState(safely(() => ctx.loadState(), ctx));
    this.storedFeeds = new Set(Object.keys(this.state.feeds));
    this.apiUrl = (options.apiUrl || DEFAULT_GITHUB_API_URL).replace(/\/+$/, "");
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.ctx.clock.clearTimeout(this.timer);
    this.inFlight?.abort();
    await this.ticking;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.ctx.clock.setTimeout(() => void (this.ticking = this.tick()), Math.max(0, delayMs));
  }

  private async tick(): Promise<void> {
    let delay: number;
    try {
      delay = await this.pollOnce();
      this.failures = 0;
    } catch (error) {
      if (this.stopped) return;
      if (error instanceof RateLimited) return this.schedule(this.rateLimited(error.until));
      this.failures++;
      delay = Math.min(this.spec.everyMs * 2 ** this.failures, Math.max(this.spec.everyMs, MAX_BACKOFF_MS));
      const note = error instanceof SourceProblem ? error.note : undefined;
      this.ctx.log(this.failures > 1 ? "debug" : "warn", `github ${this.spec.repo}: ${(error as Error).message}; next try in ${Math.round(delay / 1000)}s`);
      this.setNote("problem", note ?? (this.failures >= 3 ? `GitHub unreachable (${(error as Error).message}); retrying` : undefined));
    }
    this.schedule(delay);
  }

  /** One round over the feeds; returns the delay before the next. */
  private async pollOnce(): Promise<number> {
    await this.prepare();
    const feeds = feedsFor(this.repo!, this.spec.events, this.spec.ref ?? this.state.defaultBranch);
    for (const feed of feeds) {
      const answer = await this.get(feed.path, this.state.feeds[feed.path]?.etag);
      if (answer.status === 200) this.absorb(feed, answer.body, answer.etag);
      else if (answer.status !== 304) throw this.problem(answer.status, feed.path);
      this.polledHere.add(feed.path);
    }
    this.setNote("problem", undefined);
    return this.nextDelay(feeds.length);
  }

  /** The token, the repository and (for push and CI without `ref`) its default branch. */
  private async prepare(): Promise<void> {
    if (!this.tokenKnown) {
      this.token = await this.options.token?.().catch(() => undefined);
      this.tokenKnown = true;
      this.setNote("auth", this.token ? undefined : UNAUTHENTICATED_NOTE);
    }
    this.repo ??= await resolveGithubRepo(this.spec.repo, this.ctx.directory).catch((error: Error) => {
      throw new SourceProblem(error.message, error.message);
    });
    if (this.spec.ref || this.state.defaultBranch || !needsBranch(this.spec.events)) return;
    const answer = await this.get(`/repos/${this.repo}`, undefined);
    if (answer.status !== 200) throw this.problem(answer.status, `/repos/${this.repo}`);
    const branch = (answer.body as { default_branch?: unknown } | undefined)?.default_branch;
    if (typeof branch !== "string" || !branch) throw new SourceProblem(`GitHub did not say ${this.repo}'s default branch`);
    this.state.defaultBranch = branch;
    safely(() => this.ctx.saveState(this.state), this.ctx);
  }

  /** Records a listing's items; the ones not seen before fire, oldest first (none on the listing's first poll ever). */
  private absorb(feed: Feed, body: unknown, etag: string | undefined): void {
    if (this.stopped) return; // unsaved: what it holds fires after the next start
    const previous = this.state.feeds[feed.path];
    const items = feed.items(body);
    const seen = new Set(previous?.seen ?? []);
    const floor = previous?.latest ? Date.parse(previous.latest) - TIME_SLACK_MS : -Infinity;
    const fresh = previous ? items.filter((item) => !seen.has(item.key) && !(item.time && Date.parse(item.time) <= floor)) : [];
    let latest = previous?.latest;
    for (const item of items) {
      seen.add(item.key);
      if (item.time && (!latest || item.time > latest)) latest = item.time;
    }
    this.state.feeds[feed.path] = { etag: this.options.conditional === false ? undefined : etag, seen: [...seen].slice(-SEEN_LIMIT), latest };
    const caughtUp = this.storedFeeds.has(feed.path) && !this.polledHere.has(feed.path);
    // Listings come newest first; GitHub's times are whole seconds, so ties keep that order reversed.
    for (const item of fresh.reverse().sort((a, b) => (a.time ?? "").localeCompare(b.time ?? ""))) {
      this.ctx.emit(caughtUp ? { ...item.event, caughtUp: true } : item.event);
    }
    safely(() => this.ctx.saveState(this.state), this.ctx);
  }

  /** A GET; throws RateLimited instead of asking when GitHub said to wait, or when it says so now. */
  private async get(path: string, etag: string | undefined): Promise<Answer> {
    const now = this.ctx.clock.now();
    if (this.budget && this.budget.remaining <= 0 && this.budget.resetMs > now) throw new RateLimited(this.budget.resetMs);
    const headers: Record<string, string> = { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", "user-agent": "opencode-errands" };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (etag && this.options.conditional !== false) headers["if-none-match"] = etag;
    const controller = new AbortController();
    this.inFlight = controller;
    const timeout = this.ctx.clock.setTimeout(() => controller.abort(), this.options.requestTimeoutMs ?? 30_000);
    try {
      const response = await fetch(`${this.apiUrl}${path}`, { headers, signal: controller.signal });
      this.readHeaders(response.headers);
      const wait = await rateLimitWait(response, this.ctx.clock.now());
      if (wait !== undefined) throw new RateLimited(wait);
      const body: unknown = response.status === 200 ? await response.json() : undefined;
      if (!response.bodyUsed) await response.body?.cancel().catch(() => {});
      return { status: response.status, body, etag: response.headers.get("etag") ?? undefined };
    } finally {
      this.ctx.clock.clearTimeout(timeout);
      this.inFlight = undefined;
    }
  }

  private readHeaders(headers: Headers): void {
    const interval = Number(headers.get("x-poll-interval"));
    if (interval > 0) this.pollIntervalMs = interval * 1000;
    const remaining = headers.get("x-ratelimit-remaining");
    const reset = Number(headers.get("x-ratelimit-reset"));
    if (remaining !== null && reset > 0) this.budget = { remaining: Number(remaining), resetMs: reset * 1000 + 1000 };
  }

  private rateLimited(untilMs: number): number {
    const at = new Date(untilMs).toISOString().slice(11, 19);
    this.ctx.log("warn", `github ${this.spec.repo}: rate limited by GitHub; next request at ${at} UTC`);
    this.setNote("problem", `rate limited by GitHub until ${at} UTC; no request before then`);
    return untilMs - this.ctx.clock.now();
  }

  /** `every`, or longer when GitHub asks (X-Poll-Interval) or the remaining budget would not last until its reset. */
  private nextDelay(requestsPerPoll: number): number {
    const now = this.ctx.clock.now();
    const budget = this.budget;
    const paced = budget && budget.resetMs > now ? ((budget.resetMs - now) * requestsPerPoll) / Math.max(budget.remaining, 1) : 0;
    return Math.max(this.spec.everyMs, this.pollIntervalMs, paced);
  }

  private problem(status: number, path: string): SourceProblem {
    if (status === 401) {
      this.tokenKnown = false; // look it up again: it may have been renewed
      return new SourceProblem("GitHub answered 401 (bad credentials)", "GitHub refused the token (401); set a valid GITHUB_TOKEN or run gh auth login");
    }
    if (status === 404) return new SourceProblem(`GitHub answered 404 for ${path}`, `${this.repo} not found, or the token cannot read it; check the repository name and the token's access`);
    return new SourceProblem(`GitHub answered ${status} for ${path}`);
  }

  private setNote(which: "auth" | "problem", note: string | undefined): void {
    this.notes[which] = note;
    const shown = this.notes.problem ?? this.notes.auth;
    if (shown === this.notes.shown) return;
    this.notes.shown = shown;
    safely(() => this.ctx.setNote(shown), this.ctx);
  }
}

/** When a 403/429 says to wait: until retry-after, or the rate limit's reset; undefined when it is not a rate limit. */
async function rateLimitWait(response: Response, now: number): Promise<number | undefined> {
  if (response.status !== 403 && response.status !== 429) return undefined;
  const retryAfter = Number(response.headers.get("retry-after"));
  if (retryAfter > 0) return now + retryAfter * 1000;
  const reset = Number(response.headers.get("x-ratelimit-reset"));
  if (response.headers.get("x-ratelimit-remaining") === "0" && reset > 0) return Math.max(reset * 1000 + 1000, now + 1000);
  const message = await response.text().catch(() => "");
  return response.status === 429 || /rate limit/i.test(message) ? now + SECONDARY_LIMIT_WAIT_MS : undefined;
}

function readState(raw: unknown): GithubState {
  const feeds: Record<string, FeedState> = {};
  const stored = (raw && typeof raw === "object" ? raw : {}) as Partial<GithubState>;
  for (const [path, feed] of Object.entries(stored.feeds ?? {})) {
    if (!feed || !Array.isArray(feed.seen)) continue;
    feeds[path] = { seen: feed.seen.filter((key): key is string => typeof key === "string"), etag: typeof feed.etag === "string" ? feed.etag : undefined, latest: typeof feed.latest === "string" ? feed.latest : undefined };
  }
  return { defaultBranch: typeof stored.defaultBranch === "string" ? stored.defaultBranch : undefined, feeds };
}

function safely<T>(fn: () => T, ctx: SourceContext): T | undefined {
  try {
    return fn();
  } catch (error) {
    ctx.log("error", `github source: ${(error as Error).message}`);
    return undefined;
  }
}

const REPO = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

/**
 * `owner/repo` as given (checked), or for `"."` the project's `origin` remote (https, ssh and
 * scp-like URLs). Throws an Error whose message names the fix.
 */
export async function resolveGithubRepo(value: string, directory: string): Promise<string> {
  const given = value.trim();
  if (given !== ".") {
    const repo = REPO.test(given) ? given : repoFromUrl(given);
    if (!repo || /\/\.\.?$/.test(repo)) throw new Error(`github: "${value}" is not a repository; give it as "owner/repo" (e.g. "octocat/hello-world"), or "." for this project's origin remote`);
    return repo;
  }
  let url: string;
  try {
    url = (await run("git", ["remote", "get-url", "origin"], { cwd: directory, timeout: 5000 })).stdout.trim();
  } catch {
    throw new Error(`github: "." means this project's origin remote, but ${directory} has none; give the repository as "owner/repo", or add the remote (git remote add origin https://github.com/OWNER/REPO.git)`);
  }
  const repo = repoFromUrl(url);
  if (!repo) throw new Error(`github: the origin remote (${url.replace(/\/\/[^/@]*@/, "//")}) is not a GitHub repository URL; give the repository as "owner/repo"`);
  return repo;
}

/** owner/repo from https://host/owner/repo(.git), ssh://git@host[:port]/owner/repo.git or git@host:owner/repo.git. */
export function repoFromUrl(url: string): string | undefined {
  const scp = /^[\w.-]+@[\w.-]+:(?!\/)(.+)$/.exec(url);
  let path = scp?.[1];
  if (!path) {
    try {
      path = /^(https?|ssh|git):$/.test(new URL(url).protocol) ? new URL(url).pathname : undefined;
    } catch {
      return undefined;
    }
  }
  const repo = path?.replace(/^\/+|\/+$/g, "").replace(/\.git$/, "");
  return repo && REPO.test(repo) ? repo : undefined;
}

/**
 * The token to poll with: GITHUB_TOKEN, else `gh auth token` (for the API's host when it is not
 * github.com), else undefined. gh is given a few seconds; gh missing or logged out gives undefined.
 */
export async function githubToken(options: { apiUrl?: string; env?: NodeJS.ProcessEnv; gh?: string; timeoutMs?: number } = {}): Promise<string | undefined> {
  const env = options.env ?? process.env;
  const fromEnv = env.GITHUB_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  const args = ["auth", "token"];
  try {
    const host = options.apiUrl ? new URL(options.apiUrl).host : "api.github.com";
    if (host !== "api.github.com") args.push("--hostname", host);
    const { stdout } = await run(options.gh ?? "gh", args, { env, timeout: options.timeoutMs ?? 3000 });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}
