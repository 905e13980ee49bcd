import type { Host } from "../host/host.ts";
import { errorMessage } from "../core/errors.ts";

/**
 * Option dashboardPort: the dashboard served from inside OpenCode. Loaded only when asked for,
 * so an OpenCode without it pays nothing. A port already taken (another OpenCode on the same
 * database serves it) is logged, not an error. Returns the stop function for dispose.
 */
export function serveDashboardFromPlugin(dbPath: string, port: number, host: Host): () => void {
  let stop: (() => Promise<void>) | undefined;
  let stopped = false;
  import("./dashboard-server.ts")
    .then(({ startDashboard }) => startDashboard({ dbPath, port, host: "127.0.0.1" }))
    .then((dashboard) => {
      if (stopped) return void dashboard.close();
      stop = dashboard.close;
      void host.log("info", "background tasks dashboard", { url: dashboard.url }).catch(() => undefined);
      void host.toast({ title: "Background tasks dashboard", message: dashboard.url, variant: "info" }).catch(() => undefined);
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
