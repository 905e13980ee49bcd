import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Dashboard, DashboardOptions } from "../dashboard/dashboard-server.ts";
import type { CliIo } from "./cli-io.ts";
import { openReader } from "./open-reader.ts";
import type { CliArgs } from "./parse-cli-args.ts";

/**
 * The dashboard, given by the CLI's entry (src/bin/main.ts): the CLI never imports the dashboard
 * and the dashboard never imports the CLI.
 */
export type DashboardStarter = {
  start(config: DashboardOptions): Promise<Dashboard>;
  readTokenFile(dbPath: string, port: number): string | undefined;
};

/**
 * `dashboard`: serves the page until Ctrl-C. Returns 0 at once (the server keeps the process
 * alive); a failure to listen is reported later and sets a failing exit code. At the default
 * path the database may not exist yet (the plugin has not run): the page waits for it. A path
 * given with --db must exist.
 */
export function dashboardCommand(dbPath: string, args: CliArgs, io: CliIo, dashboard: DashboardStarter): number {
  const waiting = args.db === undefined && !existsSync(dbPath);
  if (!waiting) openReader(dbPath).close(); // the same clear message as list/show for a missing or foreign file
  dashboard.start({ dbPath, port: args.port ?? 4098, host: args.host ?? "127.0.0.1" })
    .then((dashboard) => {
      const note = waiting ? "There is no database there yet: the page says how to get one, and fills in when the plugin creates it.\n" : "";
      io.stdout(`Dashboard for ${dbPath}\n  ${dashboard.url}\nOpen that URL (it carries the access token). Ctrl-C stops it.\n${note}`);
      if (args.host && args.host !== "127.0.0.1" && args.host !== "localhost") {
        io.stderr(`Listening on ${args.host}: anyone who can reach it and has the URL can cancel tasks.\n`);
      }
      if (args.open) openBrowser(dashboard.url, io);
      stopOnSignal(dashboard);
    })
    .catch(async (error: unknown) => {
      const code = (error as { code?: string }).code;
      const running = code === "EADDRINUSE" ? await runningDashboardUrl(dbPath, args, dashboard) : undefined;
      if (running) return openRunning(running, dbPath, args, io);
      const hint = code === "EADDRINUSE" ? ` Port ${args.port} is taken: pass --port <another> (or 0 for any free one).` : "";
      io.stderr(`The dashboard could not start: ${error instanceof Error ? error.message : String(error)}.${hint}\n`);
      process.exitCode = 1;
    });
  return 0;
}

/**
 * The port is taken: when it is the dashboard an OpenCode serves on this database (option
 * dashboardPort), its signed-in URL, from the token file the plugin left for the user, checked
 * against the server (a stale file from a crash gets a 401).
 */
async function runningDashboardUrl(dbPath: string, args: CliArgs, dashboard: DashboardStarter): Promise<string | undefined> {
  const token = dashboard.readTokenFile(dbPath, args.port!);
  if (!token) return undefined;
  const host = args.host === "0.0.0.0" || args.host === "::" || !args.host ? "127.0.0.1" : args.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${args.port}/?token=${encodeURIComponent(token)}`;
  try {
    const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(3000) });
    return res.status === 303 ? url : undefined;
  } catch {
    return undefined;
  }
}

function openRunning(url: string, dbPath: string, args: CliArgs, io: CliIo): void {
  io.stdout(`The dashboard for ${dbPath} already runs on port ${args.port} (an OpenCode serves it: plugin option dashboardPort).\n  ${url}\nOpen that URL (it carries the access token; keep it to yourself). It stops when that OpenCode stops.\n`);
  if (args.open) openBrowser(url, io);
}

function openBrowser(url: string, io: CliIo): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  const child = spawn(command, [url], { stdio: "ignore", detached: true });
  child.on("error", () => io.stderr(`Could not open a browser (${command}); open the URL yourself.\n`));
  child.unref();
}

function stopOnSignal(dashboard: Dashboard): void {
  const stop = () => void dashboard.close().finally(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
