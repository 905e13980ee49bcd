import { defaultDbPath } from "../store/default-db-path.ts";
import { CliError } from "./cli-error.ts";
import { processIo, type CliIo } from "./cli-io.ts";
import { dashboardCommand, type DashboardStarter } from "./dashboard-command.ts";
import { automationsCommand, runsCommand } from "./automations-command.ts";
import { webhooksCommand } from "./webhooks-command.ts";
import { workersCommand } from "./workers-command.ts";
import { worktreesCommand } from "./worktrees-command.ts";
import { costsCommand } from "./costs-command.ts";
import { exportCommand } from "./export-command.ts";
import { HELP_TEXT } from "./help-text.ts";
import { listCommand } from "./list-command.ts";
import { openReader } from "./open-reader.ts";
import { parseCliArgs } from "./parse-cli-args.ts";
import { showCommand } from "./show-command.ts";
import { proposalsCommand } from "./proposals-command.ts";

/** What the CLI's entry gives it: the dashboard, which the CLI itself does not import. */
export type CliParts = { dashboard?: DashboardStarter };

/**
 * `opencode-errands <command>` (Node). Returns the exit code: 0 ok, 1 failure, 2 usage;
 * a promise of it for a command that waits (proposals approve|reject). The installed binary runs
 * src/bin/main.ts, which passes the dashboard in.
 */
export function main(argv: string[], io: CliIo = processIo, parts: CliParts = {}): number | Promise<number> {
  try {
    const args = parseCliArgs(argv);
    if (args.command === "help") {
      io.stdout(HELP_TEXT);
      return 0;
    }
    const dbPath = args.db ?? defaultDbPath(io.env);
    if (args.command === "dashboard") {
      if (!parts.dashboard) throw new CliError("The dashboard is not part of this entry point; run the opencode-errands binary (src/bin/main.ts).", 1);
      return dashboardCommand(dbPath, args, io, parts.dashboard);
    }
    if (args.command === "worktrees") return worktreesCommand(dbPath, args, io).catch((error: unknown) => reportError(error, io));
    const reader = openReader(dbPath);
    let waiting: Promise<number> | undefined;
    try {
      if (args.command === "list") listCommand(reader, args, io);
      if (args.command === "show") showCommand(reader, args, io);
      if (args.command === "export") exportCommand(reader, dbPath, io);
      if (args.command === "automations") automationsCommand(reader, args, io);
      if (args.command === "runs") runsCommand(reader, args, io);
      if (args.command === "webhooks") waiting = webhooksCommand(reader, dbPath, args, io);
      if (args.command === "workers") workersCommand(reader, args, io);
      if (args.command === "costs") costsCommand(reader, args, io);
      if (args.command === "proposals") waiting = proposalsCommand(reader, dbPath, args, io);
    } finally {
      reader.close();
    }
    return waiting ? waiting.catch((error: unknown) => reportError(error, io)) : 0;
  } catch (error) {
    return reportError(error, io);
  }
}

function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CliError) {
    io.stderr(`${error.message}\n`);
    return error.exitCode;
  }
  io.stderr(`Unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
}
