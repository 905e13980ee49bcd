import { GITHUB_EVENTS, type EventSpec, type GithubEventName } from "../automations/automation.ts";
import { parseDuration, TriggerSpecError, type TriggerInput } from "../automations/trigger-input.ts";
import { branchNameProblem } from "./github-ref.ts";

const WEBHOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const DIFFS = ["hash", "full", "exit_code"] as const;

/** The four event kinds' fields, checked; defaults filled in. `github: "."` is resolved later, with the project. */
export function parseEventTrigger(kind: string, input: TriggerInput): EventSpec {
  switch (kind) {
    case "watch": return parseWatch(input);
    case "command": return parseCommand(input);
    case "webhook": return parseWebhook(input);
    default: return parseGithub(input);
  }
}

function parseWatch(input: TriggerInput): EventSpec {
  const paths = stringList("watch", input.watch, 'e.g. ["src/", "test/**/*.ts"]');
  if (paths.length === 0) throw new TriggerSpecError(`"watch" needs at least one path or glob relative to the project, e.g. ["src/"].`);
  for (const path of paths) {
    if (path.startsWith("/") || path.split("/").includes("..")) {
      throw new TriggerSpecError(`"watch": "${path}" must be relative to the project and stay inside it, e.g. "src/".`);
    }
  }
  const ignore = stringList("ignore", input.ignore ?? [], 'e.g. ["**/*.log"]');
  const debounce = input.debounce ?? "1s";
  return { kind: "watch", paths, ignore, debounce, debounceMs: parseDuration(debounce, "debounce", 50, 3_600_000) };
}

function parseCommand(input: TriggerInput): EventSpec {
  const command = String(input.command).trim();
  if (command === "") throw new TriggerSpecError(`"command" must be a shell command, e.g. "docker ps --format '{{.Names}}'".`);
  const diff = input.diff ?? "hash";
  if (!DIFFS.includes(diff)) throw new TriggerSpecError(`"diff": "${diff}" must be one of ${DIFFS.join(", ")}.`);
  const every = input.every ?? "30s";
  const timeout = input.timeout ?? "30s";
  return {
    kind: "command", command, every, everyMs: parseDuration(every, "every"), diff,
    timeout, timeoutMs: parseDuration(timeout, "timeout", 1000, 3_600_000),
  };
}

function parseWebhook(input: TriggerInput): EventSpec {
  const name = String(input.webhook);
  if (!WEBHOOK_NAME.test(name)) {
    throw new TriggerSpecError(`"webhook": "${name}" must be a name of letters, digits, - and _ (at most 64), e.g. "deploy"; it becomes /hooks/<name>.`);
  }
  if (input.secret !== undefined) {
    throw new TriggerSpecError(`"secret" cannot be given here: the plugin generates the webhook's secret and never shows it to the model. Leave "secret" out; the user reads it with \`opencode-errands webhooks --show-secret\`, or sets their own with \`opencode-errands webhooks set-secret ${name}\` in a terminal. Nothing was created.`);
  }
  return { kind: "webhook", name };
}

function parseGithub(input: TriggerInput): EventSpec {
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
  const every = input.every ?? "60s";
  return {
    kind: "github", repo, events: [...new Set(events)] as GithubEventName[], every, everyMs: parseDuration(every, "every"),
    ...(ref !== undefined ? { ref } : {}),
  };
}

function stringList(name: string, value: unknown, example: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v.trim() === "")) {
    throw new TriggerSpecError(`"${name}" must be a list of non-empty strings, ${example}.`);
  }
  return value.map((v: string) => v.trim());
}
