/**
 * GitHub polling cost when nothing changes: requests that count against the rate limit, per poll
 * and per minute, for the github source with ETags (If-None-Match; goal 0) against the same
 * poller with ETags off (the baseline), on the fake GitHub API (no network, no OpenCode).
 * The trigger watches three listings (new PRs, new issues, failed CI on main) with a token; each
 * mode polls every 100 ms for BENCH_GITHUB_SECONDS (default 5) after its baseline, and the
 * figures are also given for the default period of 60 s.
 * Run alone with `npx tsx bench/github.ts`, or call runGithubBench() from bench/run.ts.
 */
import { pathToFileURL } from "node:url";
import { systemClock } from "../src/core/clock.ts";
import type { GithubEventName } from "../src/automations/automation.ts";
import { startGithubSource } from "../src/triggers/github-source.ts";
import { startFakeGithub } from "../test/harness/fake-github.ts";
import { waitUntil } from "../test/harness/events.ts";

const EVENTS: GithubEventName[] = ["pr_opened", "issue_opened", "ci_failed"];
const LISTINGS = 3;
const EVERY_MS = 100;

export type GithubBenchRow = {
  label: string;
  polls: number;
  requests: number;
  notModified: number;
  /** Requests that counted against the rate limit. */
  costly: number;
  /** Polls with at least one request that counted, a minute: at the measured pace, and at `every: 60s`. */
  costlyPollsPerMinute: number;
  costlyPollsPerMinuteAt60s: number;
  fired: number;
};

export async function runGithubBench({ seconds = Number(process.env.BENCH_GITHUB_SECONDS ?? 5), print = true } = {}): Promise<GithubBenchRow[]> {
  const rows = [await measure("ETags (If-None-Match)", true, seconds), await measure("ETags off (baseline)", false, seconds)];
  if (print) report(rows, seconds);
  return rows;
}

async function measure(label: string, conditional: boolean, seconds: number): Promise<GithubBenchRow> {
  const fake = await startFakeGithub({ limit: 1_000_000 });
  const fired: string[] = [];
  const source = await startGithubSource(
    { kind: "github", repo: fake.repo, events: EVENTS, ref: "main", every: `${EVERY_MS}ms`, everyMs: EVERY_MS },
    {
      directory: process.cwd(),
      emit: (event) => fired.push(event.summary),
      loadState: () => undefined,
      saveState: () => {},
      setNote: () => {},
      log: () => {},
      clock: systemClock,
      ownWrites: () => new Set(),
    },
    { apiUrl: fake.url, token: async () => "ghp_bench", conditional },
  );
  try {
    await waitUntil(() => fake.requests.length >= LISTINGS, { what: "the baseline poll" });
    const from = fake.requests.length;
    const began = Date.now();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const minutes = (Date.now() - began) / 60_000;
    const requests = fake.requests.slice(from);
    const polls: (typeof requests)[] = [];
    for (let i = 0; i + LISTINGS <= requests.length; i += LISTINGS) polls.push(requests.slice(i, i + LISTINGS));
    const costlyPolls = polls.filter((poll) => poll.some((r) => r.costly)).length;
    return {
      label,
      polls: polls.length,
      requests: requests.length,
      notModified: requests.filter((r) => r.status === 304).length,
      costly: requests.filter((r) => r.costly).length,
      costlyPollsPerMinute: costlyPolls / minutes,
      costlyPollsPerMinuteAt60s: polls.length ? costlyPolls / polls.length : 0,
      fired: fired.length,
    };
  } finally {
    await source.stop();
    await fake.close();
  }
}

function report(rows: GithubBenchRow[], seconds: number): void {
  console.log(`github: nothing changes; ${LISTINGS} listings (${EVENTS.join(", ")}), polled every ${EVERY_MS} ms for ${seconds} s with a token`);
  console.log("mode                    polls  requests  304s  costly requests  costly polls/min (measured)  costly polls/min at every 60s  fired");
  for (const r of rows)
    console.log(
      `${r.label.padEnd(22)} ${String(r.polls).padStart(6)} ${String(r.requests).padStart(9)} ${String(r.notModified).padStart(5)} ${String(r.costly).padStart(16)} ${r.costlyPollsPerMinute.toFixed(0).padStart(28)} ${r.costlyPollsPerMinuteAt60s.toFixed(2).padStart(30)} ${String(r.fired).padStart(6)}`,
    );
  const [withEtags, without] = rows;
  const perHour = (without!.costly / Math.max(without!.polls, 1)) * 60;
  console.log(`goal: 0 costly polls a minute when nothing changed: ${withEtags!.costly === 0 ? "met" : "NOT met"} (${withEtags!.costly} costly requests); the baseline spends ${perHour.toFixed(0)} requests an hour at every 60s, of GitHub's 5,000 with a token (60 without)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runGithubBench();
