// The CLI binary's composition root: the command line with the dashboard it can start. Kept apart
// so that neither src/cli nor src/dashboard imports the other.
import { main as cliMain } from "../cli/main.ts";
import { processIo, type CliIo } from "../cli/cli-io.ts";
import { startDashboard } from "../dashboard/dashboard-server.ts";
import { readTokenFile } from "../dashboard/token-file.ts";

/** `opencode-errands <command>`: the exit code, or a promise of it for a command that waits. */
export function main(argv: string[], io: CliIo = processIo): number | Promise<number> {
  return cliMain(argv, io, { dashboard: { start: startDashboard, readTokenFile } });
}
