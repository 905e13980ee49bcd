/** What the demo prints when something goes wrong: the error, then the server's last log lines. */
import type { Stack } from "../test/harness/plugin-stack.ts";
import { bold, red } from "./timeline.ts";

const LOG_LINES = 20;
const LINE_CHARS = 240;

export function reportFailure(error: unknown, stack: Stack | undefined): void {
  const message = error instanceof Error ? error.message : String(error);
  // A failed start carries the server's whole output in its message: show only its end.
  const [what, startOutput] = message.split("Server output:\n");
  console.error(`\n${red(bold("Demo failed:"))} ${what.trim()}`);
  const log = stack?.server.logs() ?? startOutput ?? "";
  const lines = log.trimEnd().split("\n").slice(-LOG_LINES);
  if (log.trim()) console.error(`\nLast ${lines.length} lines of the opencode server log:\n${lines.map((l) => `  ${clipped(l)}`).join("\n")}`);
}

/** Long INFO lines cut short; error lines whole, since they say what went wrong. */
function clipped(line: string): string {
  if (line.length <= LINE_CHARS || /level=(ERROR|WARN)/.test(line)) return line;
  return `${line.slice(0, LINE_CHARS)}…`;
}
