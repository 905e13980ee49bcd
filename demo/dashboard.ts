/**
 * The dashboard, served by the plugin itself inside OpenCode (plugin option `dashboardPort`).
 * The plugin logs and toasts only that it runs (its access token must not reach OpenCode's log,
 * which the model can read); it leaves the token in a file only the user can read, which
 * `opencode-errands dashboard --open` uses. The demo reads that file the same way.
 */
import { createServer, type AddressInfo } from "node:net";
import { readTokenFile } from "../src/dashboard/token-file.ts";
import { pluginDbPath, waitUntil, type Stack } from "../test/harness/plugin-stack.ts";

/** A port free on 127.0.0.1 right now, for the plugin's dashboard. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The signed-in URL of the plugin's dashboard, from the token file it leaves next to its database. */
export function dashboardUrl(stack: Stack, port: number): Promise<string> {
  const db = pluginDbPath(stack.server);
  return waitUntil(() => {
    const token = readTokenFile(db, port);
    return token && `http://127.0.0.1:${port}/?token=${token}`;
  }, { timeoutMs: 15_000, intervalMs: 50, what: "the dashboard's token file from the plugin" });
}
