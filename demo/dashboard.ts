/**
 * The dashboard, served by the plugin itself inside OpenCode (plugin option `dashboardPort`).
 * The plugin announces its URL, which carries the access token, in a toast and in its log.
 */
import { createServer, type AddressInfo } from "node:net";
import { waitUntil, type Stack } from "../test/harness/plugin-stack.ts";

const TOAST_TITLE = "Background tasks dashboard";

/** A port free on 127.0.0.1 right now, for the plugin's dashboard. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The URL from the plugin's toast (a `tui.toast.show` event), or from its log line if the toast came before the demo listened. */
export function dashboardUrl(stack: Stack, port: number): Promise<string> {
  const url = new RegExp(`http://127\\.0\\.0\\.1:${port}/\\?token=[\\w-]+`);
  const fromToast = () => stack.events.events
    .map((e) => e.properties as { title?: string; message?: string })
    .filter((p) => p.title === TOAST_TITLE)
    .map((p) => url.exec(p.message ?? "")?.[0])
    .find(Boolean);
  const fromLog = () => url.exec(stack.server.logs())?.[0];
  return waitUntil(() => fromToast() ?? fromLog(), { timeoutMs: 15_000, intervalMs: 50, what: "the dashboard's URL from the plugin" });
}
