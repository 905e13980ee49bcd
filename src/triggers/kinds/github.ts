import type { RunningSource } from "../trigger-source.ts";
import { parseDuration, stringList, TriggerSpecError } from "../trigger-input.ts";
import { branchNameProblem } from "../github-ref.ts";
import { defineKind } from "./trigger-kind.ts";
import { orList } from "./words.ts";

/** GitHub activity a `github` trigger can fire on. */
export const GITHUB_EVENTS = [
  "push", "pr_opened", "pr_merged", "pr_review", "ci_complete", "ci_failed", "issue_opened", "issue_comment", "release",
] as const;
export type GithubEventName = (typeof GITHUB_EVENTS)[number];

export type GithubSpec = { kind: "github"; repo: string; events: GithubEventName[]; ref?: string; every: string; everyMs: number };

const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const EVENT_WORDS: Record<string, string> = {
  push: "pushes", pr_opened: "new PRs", pr_merged: "merged PRs", pr_review: "PR reviews", ci_complete: "finished CI",
  ci_failed: "failed CI", issue_opened: "new issues", issue_comment: "issue comments", release: "releases",
};

/** A repository's activity, polled every `every` (`"."`: the project's origin, resolved when it is created). */
export const githubKind = defineKind<GithubSpec, "event">({
  key: "github", kind: "github", timing: "event", fields: ["events", "ref", "every"],
  shape: '{"github":"owner/repo" or ".","events":["pr_opened","ci_failed"],"ref":"main","every":"60s"}',
  brief: "owner/repo or .",
  args: (s, { text }) => ({ github: text, events: s.array(s.enum(GITHUB_EVENTS)).optional(), ref: text }),
  parse: (input) => {
    const repo = String(input.github).trim();
    if (repo !== "." && !REPO.test(repo)) throw new TriggerSpecError(`"github": "${repo}" must be "owner/repo", or "." for the project's origin remote.`);
    const events = stringList("events", input.events, `e.g. ["pr_opened", "ci_failed"]`);
    const unknown = events.filter((e) => !(GITHUB_EVENTS as readonly string[]).includes(e));
    if (events.length === 0 || unknown.length > 0) {
      throw new TriggerSpecError(`"events" ${unknown.length > 0 ? `has unknown ${unknown.map((e) => `"${e}"`).join(", ")}` : "is empty"}; choose from ${GITHUB_EVENTS.join(", ")}.`);
    }
    const ref = input.ref === undefined ? undefined : String(input.ref).trim();
    const problem = ref === undefined ? undefined : branchNameProblem(ref);
    if (problem) throw new TriggerSpecError(`"ref": ${JSON.stringify(ref)} is not a valid branch name: ${problem} (the rules of git check-ref-format --branch). Give a branch name such as "main" or "release/1.2", or leave "ref" out for the default branch.`);
    const every = String(input.every ?? "60s");
    return {
      kind: "github", repo, events: [...new Set(events)] as GithubEventName[], every, everyMs: parseDuration(every, "every"),
      ...(ref !== undefined ? { ref } : {}),
    };
  },
  describe: (spec) => {
    const words = orList(spec.events.map((e) => EVENT_WORDS[e] ?? e)).replace(/ or /g, " and ");
    return `${words} on ${spec.repo}${spec.ref ? ` (${spec.ref})` : ""}`;
  },
  inFull: (spec) => ({ text: `${spec.events.join(", ")} on ${spec.repo}${spec.ref ? ` (ref ${JSON.stringify(spec.ref)})` : ""}, polled every ${spec.every}` }),
  prepare: async (spec, ctx) => {
    if (spec.repo !== ".") return;
    const { resolveGithubRepo } = await import("../github-source.ts");
    try {
      spec.repo = await resolveGithubRepo(".", ctx.directory);
    } catch (error) {
      throw new TriggerSpecError(error instanceof Error ? error.message : String(error));
    }
  },
  start: async (spec, ctx, env): Promise<RunningSource> => {
    const { startGithubSource, githubToken } = await import("../github-source.ts");
    return startGithubSource(spec, ctx, { apiUrl: env.githubApiUrl, token: () => githubToken({ apiUrl: env.githubApiUrl }) });
  },
});
