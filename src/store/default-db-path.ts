import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * `$XDG_DATA_HOME/opencode-errands/errands.db`, else under `~/.local/share`
 * (the XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored).
 */
export function defaultDbPath(env: Record<string, string | undefined> = process.env, home = homedir()): string {
  const xdg = env.XDG_DATA_HOME;
  const dataHome = xdg && isAbsolute(xdg) ? xdg : join(home, ".local", "share");
  return join(dataHome, "opencode-errands", "errands.db");
}
