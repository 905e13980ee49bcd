import { parseChannels, type Channels } from "../channels/channel-config.ts";
import { parseDiscovery, type DiscoveryConfig } from "../discovery/discovery-config.ts";
import { parseWorkers, type WorkerConfig } from "../workers/worker-config.ts";
import { parseBudget, type Budget } from "../core/budget.ts";

/** The plugin's options, from `["opencode-errands", { ...options }]` in opencode.json. */
export type Options = {
  /** How often the fallback poll checks running tasks, in ms. Default 2000, range 100-60000. */
  pollIntervalMs: number;
  /** background_output's wait when `block: true` has no timeout, in seconds. Default 30, range 1-600. */
  defaultBlockTimeoutSeconds: number;
  /** The longest wait background_output accepts, in seconds. Default 600, range 1-3600. */
  maxBlockTimeoutSeconds: number;
  /** Characters of a result put in the parent's notification. Default 10000, range 200-200000. */
  resultCapChars: number;
  /** Settle tasks from session.idle events; off leaves only polling (for benchmarks). Default true. */
  idleEvents: boolean;
  /** Fork: tool outputs longer than this many characters are truncated. Default 1500, range 200-100000. */
  forkToolOutputLimit: number;
  /** Fork: the most tokens of inherited context. Default 100000, range 1000-2000000. */
  forkTokenCap: number;
  /** The SQLite database. Default "" = $XDG_DATA_HOME/opencode-errands/errands.db. */
  dbPath: string;
  /** A task found mid-run after a restart: "resume" tells it to continue, "fail" settles it as error. Default "resume". */
  onInterrupted: "resume" | "fail";
  /** A running task with no activity for this long is settled as error, in minutes. Default 10, range 1-1440. */
  staleAfterMinutes: number;
  /** Settled tasks older than this are removed (at start, then every hour), in days. Default 30, range 1-3650. */
  retentionDays: number;
  /** Each automation's newest runs kept whole; older quiet runs fold into one row per day. Default 1000, range 10-1000000. */
  historyRuns: number;
  /** A task running longer than this is aborted and settled as error, in seconds. Default 1800, range 1-86400. */
  maxRunSeconds: number;
  /** Children running at once on one provider/model; more wait in a queue. Default 5, range 1-500. */
  maxConcurrentPerModel: number;
  /** Children running at once in all. Default 20, range 1-500. */
  maxConcurrentTotal: number;
  /** How deep background tasks may nest (a child launching its own). Default 2, range 1-10. */
  maxDepth: number;
  /** When the user aborts the parent (ESC), cancel its running children too. Default false. */
  cancelChildrenOnParentAbort: boolean;
  /** How often a child whose `expect` fails is sent back to work before the task fails. Default 2, range 0-10. */
  maxContinuations: number;
  /** How long an `expect.command` may run, in seconds. Default 300, range 1-3600. */
  expectTimeoutSeconds: number;
  /** The same tool call, or answers without tool calls, this many times in a row stop a task. Default 5, range 2-100. */
  stalledLoopLimit: number;
  /** Tell parents when their tasks start and meet their expectation (never starting a turn). Default false. */
  milestones: boolean;
  /** background_task's isolation when the call leaves it out: "worktree" gives each child a git worktree of HEAD. Default "none". */
  defaultIsolation: "worktree" | "none";
  /** Register the eight task_* automation tools and run the scheduler; false registers none. Default true. */
  automations: boolean;
  /**
   * Put a workspace block (branch, ahead/behind, uncommitted files, last 3 commits; git, at most
   * 100 ms) before every automation run's prompt; false = no block and no git call. Default true.
   */
  workspaceContext: boolean;
  /** An automation pauses after this many consecutive failed runs (its session is told). Default 2, range 1-100. */
  automationFailurePause: number;
  /** A rejected proposal may not be proposed again for this long, in hours. Default 24, range 0-720. */
  proposalCooldownHours: number;
  /** Proposals waiting for the user's decision, per project; more are refused. Default 3, range 1-20. */
  maxPendingProposals: number;
  /** Serve the dashboard from inside OpenCode on this 127.0.0.1 port; 0 = off (use the CLI's `dashboard`). Default 0, range 0-65535. */
  dashboardPort: number;
  /** The one webhook listener of the machine (for every project): http://<webhookHost>:<webhookPort>/hooks/<name>. Default 4097. */
  webhookPort: number;
  /** Where the webhook listener listens. Default "127.0.0.1"; "0.0.0.0" to take deliveries from other machines. */
  webhookHost: string;
  /** The GitHub REST API that github triggers poll (GitHub Enterprise: https://HOST/api/v3). Default "https://api.github.com". */
  githubApiUrl: string;
  /**
   * Where automation results may be sent outside OpenCode, by name: { "team": { "url": "https://…",
   * "format": "slack" | "ntfy" | "discord" | "json", "secret"?: "whsec_…" (json only) }, "desk": { "format":
   * "desktop" } } (every format: src/channels/formats/).
   * Definitions name channels; a URL never comes from a tool call. Default {} (none).
   */
  channels: Channels;
  /**
   * Look for useful background work while the user is around but idle, and propose it:
   * { "every": "30m", "idle": "10m", "agent": "plan", "model"?: "provider/model" } (true: these).
   * Default false (off).
   */
  discovery: DiscoveryConfig | false;
  /**
   * Other OpenCode servers that may run children: [{ "name", "url", "username"?, "passwordEnv"?,
   * "directory", "capacity"? }]. A password only ever comes from the named environment variable. Default [].
   */
  workers: WorkerConfig[];
  /** A worker that stops answering: its running children are held this long, then settle as error, in seconds. Default 120, range 1-3600. */
  workerGraceSeconds: number;
  /** The budget of every task launched without one: { "usd"?, "tokens"? } over the task with its descendants. Default false = none. */
  taskBudget: Budget | false;
  /** All background work of the machine (every project) per local day, in USD; reached: no new tasks. Default 0 = none. */
  dailyBudgetUsd: number;
};

type NumberKey = { [K in keyof Options]-?: Options[K] extends number ? K : never }[keyof Options];
type NumberRule = { default: number; min: number; max: number; unit: string };

const NUMBER_RULES: Record<NumberKey, NumberRule> = {
  pollIntervalMs: { default: 2000, min: 100, max: 60_000, unit: "ms" },
  defaultBlockTimeoutSeconds: { default: 30, min: 1, max: 600, unit: "s" },
  maxBlockTimeoutSeconds: { default: 600, min: 1, max: 3600, unit: "s" },
  resultCapChars: { default: 10_000, min: 200, max: 200_000, unit: "characters" },
  forkToolOutputLimit: { default: 1500, min: 200, max: 100_000, unit: "characters" },
  forkTokenCap: { default: 100_000, min: 1000, max: 2_000_000, unit: "tokens" },
  staleAfterMinutes: { default: 10, min: 1, max: 1440, unit: "minutes" },
  retentionDays: { default: 30, min: 1, max: 3650, unit: "days" },
  historyRuns: { default: 1000, min: 10, max: 1_000_000, unit: "runs" },
  maxRunSeconds: { default: 1800, min: 1, max: 86_400, unit: "seconds" },
  maxConcurrentPerModel: { default: 5, min: 1, max: 500, unit: "tasks" },
  maxConcurrentTotal: { default: 20, min: 1, max: 500, unit: "tasks" },
  maxDepth: { default: 2, min: 1, max: 10, unit: "levels" },
  maxContinuations: { default: 2, min: 0, max: 10, unit: "continuations" },
  expectTimeoutSeconds: { default: 300, min: 1, max: 3600, unit: "seconds" },
  stalledLoopLimit: { default: 5, min: 2, max: 100, unit: "calls or answers" },
  automationFailurePause: { default: 2, min: 1, max: 100, unit: "runs" },
  proposalCooldownHours: { default: 24, min: 0, max: 720, unit: "hours" },
  maxPendingProposals: { default: 3, min: 1, max: 20, unit: "proposals" },
  workerGraceSeconds: { default: 120, min: 1, max: 3600, unit: "seconds" },
  dashboardPort: { default: 0, min: 0, max: 65_535, unit: "port (0 = off)" },
  webhookPort: { default: 4097, min: 1, max: 65_535, unit: "port" },
  dailyBudgetUsd: { default: 0, min: 0, max: 1_000_000, unit: "USD (0 = none)" },
};

export const DEFAULT_OPTIONS: Options = {
  ...(Object.fromEntries(Object.entries(NUMBER_RULES).map(([k, r]) => [k, r.default])) as Pick<Options, NumberKey>),
  idleEvents: true,
  dbPath: "",
  webhookHost: "127.0.0.1",
  githubApiUrl: "https://api.github.com",
  channels: {},
  onInterrupted: "resume",
  cancelChildrenOnParentAbort: false,
  milestones: false,
  defaultIsolation: "none",
  automations: true,
  discovery: false,
  workers: [],
  workspaceContext: true,
  taskBudget: false,
};

export class OptionsError extends Error {
  override name = "OptionsError";
}

/** Validates raw options; throws an OptionsError naming every bad option, its value and what is allowed. */
export function parseOptions(raw: unknown): Options {
  if (raw === undefined || raw === null) return { ...DEFAULT_OPTIONS };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new OptionsError(`opencode-errands: options must be an object, got ${JSON.stringify(raw)}`);
  }
  const input = raw as Record<string, unknown>;
  const problems: string[] = [];
  const options: Options = { ...DEFAULT_OPTIONS };
  const known = Object.keys(DEFAULT_OPTIONS);
  for (const key of Object.keys(input)) {
    if (!known.includes(key)) problems.push(`unknown option "${key}" (known: ${known.join(", ")})`);
  }
  for (const [key, rule] of Object.entries(NUMBER_RULES) as [NumberKey, NumberRule][]) {
    const value = input[key];
    if (value === undefined) continue;
    if (typeof value === "number" && Number.isFinite(value) && value >= rule.min && value <= rule.max) options[key] = value;
    else problems.push(`"${key}" must be a number of ${rule.unit} from ${rule.min} to ${rule.max}, got ${JSON.stringify(value)}`);
  }
  readChoice(input, "idleEvents", [true, false], options, problems);
  readChoice(input, "cancelChildrenOnParentAbort", [true, false], options, problems);
  readChoice(input, "milestones", [true, false], options, problems);
  readChoice(input, "automations", [true, false], options, problems);
  readChoice(input, "workspaceContext", [true, false], options, problems);
  readChoice(input, "onInterrupted", ["resume", "fail"], options, problems);
  readChoice(input, "defaultIsolation", ["none", "worktree"], options, problems);
  if (input.dbPath !== undefined) {
    if (typeof input.dbPath === "string") options.dbPath = input.dbPath;
    else problems.push(`"dbPath" must be a file path (a string), got ${JSON.stringify(input.dbPath)}`);
  }
  if (input.webhookHost !== undefined) {
    if (typeof input.webhookHost === "string" && input.webhookHost.trim() !== "") options.webhookHost = input.webhookHost.trim();
    else problems.push(`"webhookHost" must be a host to listen on, e.g. "127.0.0.1" or "0.0.0.0", got ${JSON.stringify(input.webhookHost)}`);
  }
  if (input.githubApiUrl !== undefined) {
    if (typeof input.githubApiUrl === "string" && /^https?:\/\/[^\s]+$/.test(input.githubApiUrl)) options.githubApiUrl = input.githubApiUrl.replace(/\/+$/, "");
    else problems.push(`"githubApiUrl" must be an http(s) URL, e.g. "https://github.example.com/api/v3", got ${JSON.stringify(input.githubApiUrl)}`);
  }
  if (input.taskBudget !== undefined && input.taskBudget !== false) {
    const parsed = parseBudget(input.taskBudget, "taskBudget");
    if (parsed.budget) options.taskBudget = parsed.budget;
    else problems.push(parsed.problem);
  }
  const discovery = parseDiscovery(input.discovery);
  if (discovery.discovery) options.discovery = discovery.discovery;
  problems.push(...discovery.problems);
  const workers = parseWorkers(input.workers);
  options.workers = workers.workers;
  problems.push(...workers.problems);
  const channels = parseChannels(input.channels);
  options.channels = channels.channels;
  problems.push(...channels.problems);
  if (options.defaultBlockTimeoutSeconds > options.maxBlockTimeoutSeconds) {
    problems.push(`"defaultBlockTimeoutSeconds" (${options.defaultBlockTimeoutSeconds}) must not exceed "maxBlockTimeoutSeconds" (${options.maxBlockTimeoutSeconds})`);
  }
  if (problems.length > 0) throw new OptionsError(`opencode-errands: bad options: ${problems.join("; ")}`);
  return options;
}

type ChoiceKey = "idleEvents" | "onInterrupted" | "defaultIsolation" | "cancelChildrenOnParentAbort" | "milestones" | "automations" | "workspaceContext";

function readChoice<K extends ChoiceKey>(
  input: Record<string, unknown>, key: K, allowed: Options[K][], options: Options, problems: string[],
): void {
  const value = input[key];
  if (value === undefined) return;
  if ((allowed as unknown[]).includes(value)) options[key] = value as Options[K];
  else problems.push(`"${key}" must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}, got ${JSON.stringify(value)}`);
}
