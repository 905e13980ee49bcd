/**
 * The GitHub listings a `github` trigger polls, and how their answers become events.
 *
 * Pull requests, issues, comments, releases, the branch head and Actions runs come from their own
 * listings rather than the activity feed (/events): since October 2025 the feed's PullRequestEvent
 * and PushEvent carry no title, author or URL, and GitHub says the feed lags by 30 s to 6 h. Only
 * reviews, which have no repository-wide listing, come from the feed.
 */
import type { GithubEventName } from "./kinds/github.ts";
import type { TriggerEvent } from "./trigger-source.ts";

/** What a feed found. `key` names it across polls; `time` (GitHub's) keeps an old item that comes back into a listing from firing. */
export type FeedItem = { key: string; time?: string; event: TriggerEvent };

/** One listing, polled for some of the trigger's events. */
export type Feed = {
  /** Relative to the API base, with its query. */
  path: string;
  /** The items of a 200 answer that the chosen events fire on. */
  items(body: unknown): FeedItem[];
};

/** Conclusions that count as failed CI. */
const FAILED = new Set(["failure", "timed_out", "startup_failure"]);

/** Push and CI are watched on a branch: the trigger's `ref` or the default branch. */
export function needsBranch(events: readonly GithubEventName[]): boolean {
  return events.some((e) => e === "push" || e === "ci_complete" || e === "ci_failed");
}

/** The feeds the chosen events need, each once. */
export function feedsFor(repo: string, events: readonly GithubEventName[], branch: string | undefined): Feed[] {
  const chosen = new Set(events);
  const base = `/repos/${repo}`;
  const feeds: Feed[] = [];
  if (chosen.has("pr_opened") || chosen.has("pr_merged"))
    feeds.push({ path: `${base}/pulls?state=all&sort=updated&direction=desc&per_page=50`, items: (body) => pullItems(body, chosen) });
  if (chosen.has("pr_review")) feeds.push({ path: `${base}/events?per_page=50`, items: reviewItems });
  if (chosen.has("issue_opened")) feeds.push({ path: `${base}/issues?state=all&sort=created&direction=desc&per_page=50`, items: issueItems });
  if (chosen.has("issue_comment")) feeds.push({ path: `${base}/issues/comments?sort=created&direction=desc&per_page=50`, items: commentItems });
  if (chosen.has("release")) feeds.push({ path: `${base}/releases?per_page=20`, items: releaseItems });
  if (branch && chosen.has("push")) feeds.push({ path: `${base}/branches/${encodeBranch(branch)}`, items: (body) => pushItems(body, branch) });
  if (branch && (chosen.has("ci_complete") || chosen.has("ci_failed")))
    feeds.push({ path: `${base}/actions/runs?branch=${encodeURIComponent(branch)}&per_page=30`, items: (body) => runItems(body, branch, chosen) });
  return feeds;
}

function pullItems(body: unknown, chosen: Set<GithubEventName>): FeedItem[] {
  const items: FeedItem[] = [];
  for (const pr of list(body)) {
    const n = text(pr, "number");
    const title = quoted(text(pr, "title"));
    const author = text(pr, "user.login");
    const data = lines({ [`PR #${n}`]: text(pr, "title"), author, url: text(pr, "html_url"), branch: `${text(pr, "head.ref")} -> ${text(pr, "base.ref")}` });
    if (chosen.has("pr_opened")) items.push({ key: `opened:${n}`, time: text(pr, "created_at"), event: { summary: `new PR #${n} ${title} by ${author}`, data } });
    const mergedAt = text(pr, "merged_at");
    if (chosen.has("pr_merged") && mergedAt) items.push({ key: `merged:${n}`, time: mergedAt, event: { summary: `PR #${n} ${title} by ${author} merged`, data } });
  }
  return items;
}

function reviewItems(body: unknown): FeedItem[] {
  const items: FeedItem[] = [];
  for (const event of list(body)) {
    if (text(event, "type") !== "PullRequestReviewEvent" || !["created", "submitted"].includes(text(event, "payload.action"))) continue;
    const review = get(event, "payload.review");
    const pr = get(event, "payload.pull_request");
    const n = text(pr, "number");
    const author = text(review, "user.login") || text(event, "actor.login");
    const state = text(review, "state").toLowerCase().replace(/_/g, " ");
    items.push({
      key: `review:${text(review, "id") || text(event, "id")}`,
      time: text(event, "created_at"),
      event: {
        summary: `review on PR #${n} ${quoted(text(pr, "title"))} by ${author}: ${state}`,
        data: lines({ [`PR #${n}`]: text(pr, "title"), reviewer: author, state, url: text(review, "html_url") || text(pr, "html_url"), review: clip(text(review, "body"), 2000) }),
      },
    });
  }
  return items;
}

function issueItems(body: unknown): FeedItem[] {
  return list(body)
    .filter((issue) => get(issue, "pull_request") === undefined)
    .map((issue) => {
      const n = text(issue, "number");
      const author = text(issue, "user.login");
      return {
        key: `issue:${n}`,
        time: text(issue, "created_at"),
        event: { summary: `new issue #${n} ${quoted(text(issue, "title"))} by ${author}`, data: lines({ [`issue #${n}`]: text(issue, "title"), author, url: text(issue, "html_url") }) },
      };
    });
}

function commentItems(body: unknown): FeedItem[] {
  return list(body).map((comment) => {
    const n = text(comment, "issue_url").split("/").pop() ?? "";
    const author = text(comment, "user.login");
    const words = text(comment, "body");
    return {
      key: `comment:${text(comment, "id")}`,
      time: text(comment, "created_at"),
      event: { summary: `new comment on #${n} by ${author}: ${quoted(words, 60)}`, data: lines({ on: `#${n}`, author, url: text(comment, "html_url"), comment: clip(words, 2000) }) },
    };
  });
}

function releaseItems(body: unknown): FeedItem[] {
  return list(body)
    .filter((release) => get(release, "draft") !== true)
    .map((release) => {
      const tag = text(release, "tag_name");
      const name = text(release, "name");
      const author = text(release, "author.login");
      const named = name && name !== tag ? ` ${quoted(name)}` : "";
      return {
        key: `release:${text(release, "id")}`,
        time: text(release, "published_at") || text(release, "created_at"),
        event: { summary: `new release ${tag}${named} by ${author}`, data: lines({ release: tag, name, author, url: text(release, "html_url") }) },
      };
    });
}

/** The branch head: a new head fires once, however many pushes moved it since the last poll. */
function pushItems(body: unknown, branch: string): FeedItem[] {
  const sha = text(body, "commit.sha");
  if (!sha) return [];
  const message = text(body, "commit.commit.message");
  const author = text(body, "commit.author.login") || text(body, "commit.commit.author.name");
  return [{
    key: `head:${sha}`,
    event: {
      summary: `push to ${branch} by ${author}: ${sha.slice(0, 7)} ${quoted(message.split("\n")[0] ?? "")}`,
      data: lines({ branch, head: sha, author, commit: clip(message, 2000), url: text(body, "commit.html_url") }),
    },
  }];
}

function runItems(body: unknown, branch: string, chosen: Set<GithubEventName>): FeedItem[] {
  const items: FeedItem[] = [];
  for (const run of list(get(body, "workflow_runs"))) {
    if (text(run, "status") !== "completed" || text(run, "head_branch") !== branch) continue;
    const conclusion = text(run, "conclusion");
    const failed = FAILED.has(conclusion);
    if (!chosen.has("ci_complete") && !(failed && chosen.has("ci_failed"))) continue;
    const name = `${text(run, "name")} #${text(run, "run_number")}`;
    items.push({
      key: `run:${text(run, "id")}:${text(run, "run_attempt") || "1"}`,
      time: text(run, "updated_at"),
      event: {
        summary: `CI ${failed ? "failed" : "finished"} on ${branch}: ${name} ${quoted(text(run, "display_title"))} (${conclusion})`,
        data: lines({ workflow: name, attempt: text(run, "run_attempt"), conclusion, branch, commit: `${text(run, "head_sha").slice(0, 7)} ${text(run, "display_title")}`, by: text(run, "actor.login"), url: text(run, "html_url") }),
      },
    });
  }
  return items;
}

function encodeBranch(branch: string): string {
  return branch.split("/").map(encodeURIComponent).join("/");
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function get(value: unknown, path: string): unknown {
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function text(value: unknown, path: string): string {
  const found = get(value, path);
  return typeof found === "string" ? found : typeof found === "number" ? String(found) : "";
}

/** A title or comment on one line, clipped and in quotes, for a summary. */
function quoted(value: string, max = 80): string {
  return JSON.stringify(clip(value.replace(/\s+/g, " ").trim(), max));
}

function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

function lines(fields: Record<string, string>): string {
  return Object.entries(fields)
    .filter(([, value]) => value.trim() !== "")
    .map(([name, value]) => `${name}: ${value}`)
    .join("\n");
}
