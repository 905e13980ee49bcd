import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";

/**
 * Where the plugin leaves the token of the dashboard it serves (option dashboardPort), so that
 * `opencode-errands dashboard --open` can print and open a signed-in URL in the user's
 * terminal: the token never goes to OpenCode's log or a toast. Next to the database (which holds
 * webhook secrets already), readable by the user only, removed when the dashboard stops.
 */
export function tokenFilePath(dbPath: string, port: number): string {
  return `${dbPath}.dashboard-${port}.token`;
}

export function writeTokenFile(dbPath: string, port: number, token: string): void {
  const path = tokenFilePath(dbPath, port);
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, `${token}\n`, { mode: 0o600 });
  chmodSync(partial, 0o600); // the mode is masked by umask on creation only
  renameSync(partial, path);
}

export function readTokenFile(dbPath: string, port: number): string | undefined {
  try {
    return readFileSync(tokenFilePath(dbPath, port), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Only while it still holds this dashboard's token: another process may serve the port by now. */
export function removeTokenFile(dbPath: string, port: number, token: string): void {
  if (readTokenFile(dbPath, port) === token) rmSync(tokenFilePath(dbPath, port), { force: true });
}
