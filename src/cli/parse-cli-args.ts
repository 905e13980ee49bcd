import { parseArgs } from "node:util";
import type { TaskStatus } from "../core/task.ts";
import type { CostGrouping } from "../cost/cost-report.ts";
import { usageError } from "./cli-error.ts";

export type CliCommand = "list" | "show" | "export" | "dashboard" | "automations" | "runs" | "webhooks" | "proposals" | "workers" | "costs" | "worktrees" | "help";

export type CliArgs = {
  command: CliCommand;
  /** Positionals after the command (show's task id; proposals' approve|reject and id). */
  operands: string[];
  db?: string;
  project?: string;
  parent?: string;
  statuses?: TaskStatus[];
  all: boolean;
  json: boolean;
  /** webhooks: print the secrets. */
  showSecret?: boolean;
  /** dashboard: where to listen, and whether to open a browser. */
  port?: number;
  host?: string;
  open?: boolean;
  /** proposals approve: approve the version printed without asking (for scripts). */
  yes?: boolean;
  /** costs: how far back (ms), and what the rows are. */
  sinceMs?: number;
  by?: CostGrouping;
  /** worktrees: remove those with nothing unmerged. */
  prune?: boolean;
};

const OPTIONS = {
  db: { type: "string" },
  project: { type: "string" },
  parent: { type: "string" },
  status: { type: "string", multiple: true },
  all: { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  port: { type: "string" },
  host: { type: "string" },
  open: { type: "boolean" },
  "show-secret": { type: "boolean" },
  yes: { type: "boolean", short: "y" },
  since: { type: "string" },
  by: { type: "string" },
  prune: { type: "boolean" },
} as const;

const ALLOWED_OPTIONS: Record<Exclude<CliCommand, "help">, string[]> = {
  list: ["db", "project", "parent", "status", "all", "json"],
  show: ["db", "json"],
  export: ["db", "json"],
  dashboard: ["db", "port", "host", "open"],
  automations: ["db", "project", "json"],
  runs: ["db", "project", "json"],
  webhooks: ["db", "project", "json", "show-secret"],
  proposals: ["db", "project", "json", "yes"],
  workers: ["db", "project", "json"],
  costs: ["db", "project", "json", "since", "by"],
  worktrees: ["db", "project", "json", "prune"],
};

const STATUSES: Record<TaskStatus, true> = { queued: true, running: true, resumed: true, completed: true, error: true, cancelled: true };

export function parseCliArgs(argv: string[]): CliArgs {
  const { values, positionals } = parseStrict(argv);
  const [command, ...operands] = positionals;
  if (values.help || command === "help") return { command: "help", operands: [], all: false, json: false };
  if (command === undefined) throw usageError("No command given.");
  if (!isCommand(command)) throw usageError(`Unknown command '${command}'. Commands: list, show, export, dashboard, automations, runs, webhooks, proposals, workers, costs, worktrees.`);
  for (const name of Object.keys(values)) {
    if (!ALLOWED_OPTIONS[command].includes(name)) throw usageError(`--${name} does not apply to ${command}.`);
  }
  checkOperands(command, operands);
  return {
    command,
    operands,
    db: values.db,
    project: values.project,
    parent: values.parent,
    statuses: values.status && parseStatuses(values.status),
    all: values.all ?? false,
    json: values.json ?? false,
    ...(command === "webhooks" ? { showSecret: values["show-secret"] ?? false } : {}),
    ...(command === "proposals" ? { yes: values.yes ?? false } : {}),
    ...(command === "worktrees" ? { prune: values.prune ?? false } : {}),
    ...(command === "costs" ? { sinceMs: parseSince(values.since), by: parseBy(values.by) } : {}),
    ...(command === "dashboard" ? { port: parsePort(values.port), host: values.host ?? "127.0.0.1", open: values.open ?? false } : {}),
  };
}

function parsePort(value: string | undefined): number {
  if (value === undefined) return 4098;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw usageError(`--port ${value} is not a port; give a number from 0 to 65535 (0 picks a free one).`);
  return port;
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000 };
const GROUPINGS: CostGrouping[] = ["automation", "model", "day"];

/** `--since 24h`, `7d`, `30d`: a whole number of hours or days back (default 7d). */
function parseSince(value: string | undefined): number {
  if (value === undefined) return 7 * UNIT_MS.d!;
  const match = /^(\d{1,5})([hd])$/.exec(value);
  if (!match || Number(match[1]) === 0) throw usageError(`--since ${value} is not a duration; give hours or days, e.g. --since 24h, 7d or 30d.`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

function parseBy(value: string | undefined): CostGrouping {
  if (value === undefined) return "automation";
  if (!(GROUPINGS as string[]).includes(value)) throw usageError(`--by ${value} is not a grouping; use --by automation, --by model or --by day.`);
  return value as CostGrouping;
}

function parseStrict(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = error instanceof Error ? error.message : String(error);
    // Node's own text goes on about positionals starting with '-': the first sentence is enough.
    throw usageError(code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? message.split(". ")[0] + "." : message);
  }
}

function isCommand(name: string): name is Exclude<CliCommand, "help"> {
  return Object.hasOwn(ALLOWED_OPTIONS, name);
}

function checkOperands(command: Exclude<CliCommand, "help">, operands: string[]): void {
  if (command === "show" && operands.length !== 1) {
    throw usageError(operands.length ? "show takes one task id." : "show needs a task id (or a unique prefix of one).");
  }
  if (command === "runs" && operands.length !== 1) {
    throw usageError(operands.length ? "runs takes one automation id." : "runs needs an automation id (or a unique prefix of one).");
  }
  if (command === "proposals") return checkProposalOperands(operands);
  if (command === "webhooks") return checkWebhookOperands(operands);
  if (command !== "show" && command !== "runs" && operands.length) throw usageError(`Unexpected argument '${operands[0]}' for ${command}.`);
}

/** `proposals`, `proposals approve <id>`, `proposals reject <id>`. */
function checkProposalOperands([action, id, ...rest]: string[]): void {
  if (action === undefined) return;
  if (action !== "approve" && action !== "reject") throw usageError(`Unknown proposals action '${action}': use \`proposals approve <id>\` or \`proposals reject <id>\`.`);
  if (id === undefined) throw usageError(`proposals ${action} needs a proposal id (or a unique prefix of one).`);
  if (rest.length) throw usageError(`proposals ${action} takes one proposal id.`);
}

/** `webhooks`, `webhooks set-secret <name>` (the secret comes on stdin: argv lands in shell history). */
function checkWebhookOperands([action, name, ...rest]: string[]): void {
  if (action === undefined) return;
  if (action !== "set-secret") throw usageError(`Unknown webhooks action '${action}': use \`webhooks\` or \`webhooks set-secret <name>\`.`);
  if (name === undefined) throw usageError("webhooks set-secret needs a webhook name; the secret is then read from stdin.");
  if (rest.length) throw usageError("webhooks set-secret takes the webhook name only: the secret is read from stdin (typed, piped or < file), never on the command line, where it would land in your shell history.");
}

function parseStatuses(values: string[]): TaskStatus[] {
  const statuses = values.flatMap((value) => value.split(",")).map((s) => s.trim()).filter(Boolean);
  const unknown = statuses.filter((s) => !Object.hasOwn(STATUSES, s));
  if (unknown.length) {
    throw usageError(`Unknown status '${unknown[0]}'. Statuses: ${Object.keys(STATUSES).join(", ")}.`);
  }
  return statuses as TaskStatus[];
}
