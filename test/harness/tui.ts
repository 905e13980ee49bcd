/**
 * The real `opencode` TUI (not serve) in a tmux session of its own, in the same private home,
 * offline, with the same mock provider and plugin config as the serve harness: what a person at
 * the keyboard sees is `screen()`, what they type is `type()` / `press()`.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { OPENCODE_BIN, opencodeEnv, prepareDirs, type StartOptions } from "./opencode-server.ts";
import { waitUntil } from "./events.ts";

const run = promisify(execFile);

export type Tui = {
  projectDir: string;
  homeDir: string;
  /** The visible screen as text (tmux capture-pane). */
  screen(): Promise<string>;
  /** Polls the screen until `test` holds; the error shows the last screen. */
  waitForScreen(test: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** Types text literally (no key names). */
  type(text: string): Promise<void>;
  /** Sends tmux key names ("Enter", "Escape", "Right"). */
  press(...keys: string[]): Promise<void>;
  stop(): Promise<void>;
};

export type TuiOptions = Pick<StartOptions, "model" | "pluginDir" | "pluginOptions" | "config" | "env" | "homeDir" | "projectDir"> & {
  width?: number;
  height?: number;
};

/** Starts the TUI and waits for its prompt box; tmux runs on a private socket, so no other tmux is touched. */
export async function startTui(options: TuiOptions): Promise<Tui> {
  const { homeDir, projectDir } = await prepareDirs(options);
  const socket = join(homeDir, "tmux.sock");
  const env = opencodeEnv(options, homeDir);
  const tmux = (...args: string[]) => run("tmux", ["-S", socket, ...args], { env });
  await tmux("new-session", "-d", "-s", "tui", "-x", String(options.width ?? 160), "-y", String(options.height ?? 50), "-c", projectDir, OPENCODE_BIN, projectDir);
  const pid = Number((await tmux("display-message", "-p", "-t", "tui", "#{pane_pid}")).stdout.trim());
  const tui: Tui = {
    projectDir,
    homeDir,
    screen: async () => (await tmux("capture-pane", "-p", "-t", "tui")).stdout,
    async waitForScreen(test, what, timeoutMs = 30_000) {
      let last = "";
      try {
        return await waitUntil(async () => {
          last = await tui.screen();
          return test(last) ? last : undefined;
        }, { timeoutMs, intervalMs: 100, what });
      } catch (error) {
        throw new Error(`${(error as Error).message}; the screen was:\n${last}`);
      }
    },
    type: async (text) => void (await tmux("send-keys", "-t", "tui", "-l", text)),
    press: async (...keys) => void (await tmux("send-keys", "-t", "tui", ...keys)),
    async stop() {
      await tmux("kill-server").catch(() => undefined);
      await exited(pid);
      if (!options.homeDir) await rm(join(homeDir, ".."), { recursive: true, force: true, maxRetries: 5 });
    },
  };
  // The prompt box's hint line: the TUI is up and takes keys.
  await tui.waitForScreen((s) => /ctrl\+p|tab\s+agents|commands/i.test(s), "the TUI's prompt", 60_000).catch(async (error) => {
    await tui.stop();
    throw error;
  });
  return tui;
}

/** OpenCode gets SIGHUP with its pane; it is killed if it has not gone within 5 s (it writes its home until it has). */
async function exited(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await waitUntil(() => !alive(), { timeoutMs: 5_000, what: "the TUI's exit" }).catch(() => {
    if (alive()) process.kill(pid, "SIGKILL");
  });
  await waitUntil(() => !alive(), { timeoutMs: 5_000, what: "the TUI's exit after SIGKILL" });
}
