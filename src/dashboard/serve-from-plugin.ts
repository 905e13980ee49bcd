import type { Host } from "../host/host.ts";
import { errorMessage } from "../core/errors.ts";
import { defaultDbPath } from "../store/default-db-path.ts";

/** The CLI's default port: the hint names --port only when the option picked another. */
const CLI_DEFAULT_PORT = 4098;

/**
 * Option dashboardPort: the dashboard served from inside OpenCode. Loaded only when asked for,
 * so an OpenCode without it pays nothing. A port already taken (another OpenCode on the same
 * database serves it) is logged, not an error. The token is never logged nor toasted (the model
 * can read OpenCode's log): it goes to a file only the user can read, and the log says how to
 * open the page (`opencode-errands dashboard --open` reads it). Returns the stop
 * function for dispose.
 */
export function serveDashboardFromPlugin(dbPath: string, port: number, host: Host, dailyBudgetUsd = 0): () => void {
  let stop: (() => Promise<void>) | undefined;
  let stopped = false;
  Promise.all([import("./dashboard-server.ts"), import("./token-file.ts")])
    .then(async ([{ startDashboard }, tokens]) => {
      // The host reads a task's child session, so its page lists each request's tool calls.
      const dashboard = await startDashboard({ dbPath, port, host: "127.0.0.1", sessionMessages: (id) => host.sessionHistory(id), dailyBudgetUsd });
      if (stopped) return void dashboard.close();
      const saved = saveToken(() => tokens.writeTokenFile(dbPath, port, dashboard.token), host);
      stop = async () => {
        tokens.removeTokenFile(dbPath, port, dashboard.token);
        await dashboard.close();
      };
      const how = saved ? `To open it signed in, run \`${openCommand(dbPath, port)}\` in a terminal.` : "Its sign-in link could not be saved for the command line (see the error logged); restart OpenCode to try again.";
      const message = `The background tasks dashboard runs at ${dashboard.origin}/. ${how}`;
      void host.log("info", message, { origin: dashboard.origin }).catch(() => undefined);
      void host.toast({ title: "Background tasks dashboard", message, variant: "info" }).catch(() => undefined);
    })
    .catch((error: unknown) => {
      const taken = (error as { code?: string }).code === "EADDRINUSE";
      const message = taken ? `Dashboard port ${port} is taken (another OpenCode may serve it); not serving it here` : "The dashboard could not start";
      void host.log(taken ? "info" : "error", message, { error: errorMessage(error) }).catch(() => undefined);
    });
  return () => {
    stopped = true;
    void stop?.().catch(() => undefined);
  };
}

function saveToken(write: () => void, host: Host): boolean {
  try {
    write();
    return true;
  } catch (error) {
    void host.log("error", "Could not save the dashboard's sign-in token for `opencode-errands dashboard --open`", { error: errorMessage(error) }).catch(() => undefined);
    return false;
  }
}

/** The CLI command that opens this dashboard, with --port and --db only where they differ from its defaults. */
function openCommand(dbPath: string, port: number): string {
  const portArg = port === CLI_DEFAULT_PORT ? "" : ` --port ${port}`;
  const dbArg = dbPath === defaultDbPath() ? "" : ` --db ${JSON.stringify(dbPath)}`;
  return `opencode-errands dashboard --open${portArg}${dbArg}`;
}
