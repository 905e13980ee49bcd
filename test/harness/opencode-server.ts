/**
 * Starts a real `opencode serve` in a private home, offline, against a mock model.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtemp, mkdir, writeFile, symlink, readdir, rm, readFile } from "node:fs/promises";
import { existsSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createOpencodeClient, type OpencodeClient } from "@opencode-ai/sdk";
import { createServer, type AddressInfo } from "node:net";

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const OPENCODE_BIN = join(PROJECT_ROOT, "node_modules/opencode-linux-x64/bin/opencode");
const PLUGIN_PACKAGE = join(PROJECT_ROOT, "node_modules/@opencode-ai/plugin");
const PLUGIN_VERSION = "1.18.33";
const LISTENING = /opencode server listening on (http:\/\/\S+)/;

/** Temp roots this process created: only these are ever removed. */
const ownedRoots = new Set<string>();
const liveServers = new Set<ChildProcess>();

// A test process that dies without stop() must not leave ~400 MB servers or temp homes behind.
process.on("exit", cleanUpNow);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => process.exit(128 + os.constants.signals[signal]));
}

function cleanUpNow(): void {
  for (const child of liveServers) child.kill("SIGKILL");
  for (const root of ownedRoots) rmSync(root, { recursive: true, force: true });
}

export interface StartOptions {
  /** Base URL of the mock model, ending in /v1. */
  model: string;
  /** Package directory of a plugin to load, with its options. */
  pluginDir?: string;
  pluginOptions?: Record<string, unknown>;
  /** Extra config, shallow-merged over the generated one. */
  config?: Record<string, unknown>;
  /** The mock model's declared limits in tokens (the host compacts a session that nears `context`); none by default. */
  modelLimit?: { context: number; output: number };
  /** The mock model's price in USD per million tokens, so that OpenCode computes each message's cost; none (cost 0) by default. */
  modelCost?: { input: number; output: number; cache_read?: number; cache_write?: number };
  env?: Record<string, string>;
  /** Reuse a home and project (e.g. of a killed server) instead of creating new ones. */
  homeDir?: string;
  projectDir?: string;
  /** Listen on this port (e.g. to restart a killed server where its clients expect it); a free one by default. */
  port?: number;
  /** Leave the temp dirs on stop (for post-mortems). */
  keepDirs?: boolean;
  logLevel?: "DEBUG" | "INFO" | "WARN" | "ERROR";
  startTimeoutMs?: number;
}

export interface OpencodeServer {
  url: string;
  client: OpencodeClient;
  projectDir: string;
  homeDir: string;
  pid: number;
  /** Milliseconds from spawn to the "listening" line. */
  startMs: number;
  /** stdout + stderr so far; with --print-logs the server's own log lines are in stderr. */
  logs(): string;
  /** The server's log file(s) under $XDG_DATA_HOME/opencode/log. */
  logFile(): Promise<string>;
  stop(): Promise<void>;
  /** SIGKILL, keeping the home for a restart. */
  kill(): Promise<void>;
  /** Removes this server's temp root, if the harness created it. */
  removeDirs(): Promise<void>;
}

export async function startOpencode(options: StartOptions): Promise<OpencodeServer> {
  const { homeDir, projectDir } = await prepareDirs(options);
  const child = spawnServer(options, homeDir, projectDir, options.port ?? (await freePort()));
  const output = collectOutput(child);
  const started = Date.now();
  const removeDirs = () => removeOwnedRoot(homeDir);
  const url = await waitForListening(child, output, options.startTimeoutMs ?? 30_000).catch(async (err) => {
    await terminate(child);
    if (!options.keepDirs) await removeDirs();
    throw err;
  });
  return {
    url,
    client: createOpencodeClient({ baseUrl: url, directory: projectDir }),
    projectDir,
    homeDir,
    pid: child.pid!,
    startMs: Date.now() - started,
    logs: () => output.text,
    logFile: () => readLogFiles(homeDir),
    stop: async () => {
      await terminate(child);
      await removeSharedObjects(tmpDirOf(homeDir));
      if (options.keepDirs) ownedRoots.delete(join(homeDir, ".."));
      else await removeDirs();
    },
    kill: () => killHard(child),
    removeDirs,
  };
}

// ---- dirs ----

/** A private home (seeded) and a git project, unless `options` names them; the TUI harness starts OpenCode there too. */
export async function prepareDirs(options: Pick<StartOptions, "homeDir" | "projectDir">): Promise<{ homeDir: string; projectDir: string }> {
  let root: string | undefined;
  const fresh = async () => (root ??= await newRoot());
  const homeDir = options.homeDir ?? join(await fresh(), "home");
  const projectDir = options.projectDir ?? join(await fresh(), "project");
  await seedHome(homeDir);
  if (!existsSync(join(projectDir, ".git"))) await initGitRepo(projectDir);
  return { homeDir, projectDir };
}

async function newRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "ocbt-"));
  ownedRoots.add(root);
  return root;
}

async function removeOwnedRoot(homeDir: string): Promise<void> {
  const root = join(homeDir, "..");
  if (!ownedRoots.has(root)) return;
  ownedRoots.delete(root);
  await rm(root, { recursive: true, force: true });
}

function xdg(homeDir: string) {
  return {
    HOME: homeDir,
    XDG_CONFIG_HOME: join(homeDir, ".config"),
    XDG_DATA_HOME: join(homeDir, ".local/share"),
    XDG_CACHE_HOME: join(homeDir, ".cache"),
    XDG_STATE_HOME: join(homeDir, ".local/state"),
    TMPDIR: tmpDirOf(homeDir),
  };
}

const tmpDirOf = (homeDir: string) => join(homeDir, "tmp");

/**
 * OpenCode npm-installs @opencode-ai/plugin into its config dir unless that dir has a
 * node_modules folder and a package-lock.json whose root lists every package.json dependency
 * (it compares names only). A lock file naming the package plus a symlink to this project's
 * installed copy satisfies that check, so no install runs and nothing touches the network.
 */
async function seedHome(homeDir: string): Promise<void> {
  for (const dir of Object.values(xdg(homeDir))) await mkdir(dir, { recursive: true });
  const configDir = join(xdg(homeDir).XDG_CONFIG_HOME, "opencode");
  const linkDir = join(configDir, "node_modules/@opencode-ai");
  if (existsSync(join(linkDir, "plugin"))) return;
  const deps = { "@opencode-ai/plugin": PLUGIN_VERSION };
  await mkdir(linkDir, { recursive: true });
  await writeFile(join(configDir, "package.json"), JSON.stringify({ dependencies: deps }, null, 2));
  const lock = { lockfileVersion: 3, requires: true, packages: { "": { dependencies: deps } } };
  await writeFile(join(configDir, "package-lock.json"), JSON.stringify(lock, null, 2));
  await symlink(PLUGIN_PACKAGE, join(linkDir, "plugin"), "dir");
}

async function initGitRepo(projectDir: string): Promise<void> {
  await mkdir(projectDir, { recursive: true });
  await writeFile(join(projectDir, "README.md"), "test project\n");
  // No user or system git config (signing, hooks) may leak into the fixture repo.
  const env = { ...inheritedEnv(), GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", ...args], {
      cwd: projectDir,
      env,
      stdio: "ignore",
    });
  git("init", "-q");
  git("add", ".");
  git("commit", "-q", "-m", "init");
}

// ---- process ----

function serverConfig(options: StartOptions): Record<string, unknown> {
  const provider = {
    mock: {
      npm: "@ai-sdk/openai-compatible",
      name: "Mock",
      options: { baseURL: options.model, apiKey: "mock" },
      models: { "mock-model": { name: "Mock", ...(options.modelLimit ? { limit: options.modelLimit } : {}), ...(options.modelCost ? { cost: options.modelCost } : {}) } },
    },
  };
  const plugin = options.pluginDir ? [[pathToFileURL(options.pluginDir).href, options.pluginOptions ?? {}]] : [];
  // Snapshots run several git commands per step; off by default to keep prompts fast.
  return { provider, model: "mock/mock-model", small_model: "mock/mock-model", plugin, snapshot: false, ...options.config };
}

/**
 * A port the OS says is free. Not `--port 0`: OpenCode then tries 4096 first, and a server started
 * right after another one stopped on 4096 got requests from this process that never reached it
 * (seen: the event stream never connected), so every server gets a port of its own.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The environment OpenCode runs in: the private home, offline, the mock provider and the plugin (serve and the TUI alike). */
export function opencodeEnv(options: StartOptions, homeDir: string): NodeJS.ProcessEnv {
  return {
    ...inheritedEnv(),
    ...xdg(homeDir),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_CONFIG_CONTENT: JSON.stringify(serverConfig(options)),
    ...options.env,
  };
}

function spawnServer(options: StartOptions, homeDir: string, projectDir: string, port: number): ChildProcess {
  const env = opencodeEnv(options, homeDir);
  const args = ["serve", "--hostname", "127.0.0.1", "--port", String(port), "--print-logs", "--log-level", options.logLevel ?? "INFO"];
  const child = spawn(OPENCODE_BIN, args, { cwd: projectDir, env, stdio: ["ignore", "pipe", "pipe"] });
  liveServers.add(child);
  child.once("exit", () => liveServers.delete(child));
  return child;
}

/** The caller's env without OpenCode's or git's own variables (e.g. when run inside OpenCode or a git hook). */
function inheritedEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(OPENCODE($|_)|GIT_)/.test(key)));
}

function collectOutput(child: ChildProcess): { text: string } {
  const output = { text: "" };
  child.stdout!.on("data", (d) => (output.text += d));
  child.stderr!.on("data", (d) => (output.text += d));
  return output;
}

function waitForListening(child: ChildProcess, output: { text: string }, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const onData = () => {
      const m = LISTENING.exec(output.text);
      if (m) done(() => resolve(m[1]));
    };
    const onExit = (code: number | null) => done(() => reject(startError(`exited with ${code}`, output.text)));
    const timer = setTimeout(() => done(() => reject(startError(`not listening after ${timeoutMs} ms`, output.text))), timeoutMs);
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.off("exit", onExit);
      settle();
    };
    child.stdout!.on("data", onData);
    child.on("exit", onExit);
  });
}

function startError(what: string, log: string): Error {
  return new Error(`opencode serve ${what}. Server output:\n${log}`);
}

async function terminate(child: ChildProcess): Promise<void> {
  if (exited(child)) return;
  const exit = exitOf(child);
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exit;
  clearTimeout(timer);
}

async function killHard(child: ChildProcess): Promise<void> {
  if (exited(child)) return;
  const exit = exitOf(child);
  child.kill("SIGKILL");
  await exit;
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
const exitOf = (child: ChildProcess) => new Promise<void>((resolve) => child.once("exit", () => resolve()));

/** Each server start leaves a ~5.5 MB hidden .so in $TMPDIR. */
async function removeSharedObjects(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => n.endsWith(".so")).map((n) => rm(join(dir, n), { force: true })));
}

async function readLogFiles(homeDir: string): Promise<string> {
  const dir = join(xdg(homeDir).XDG_DATA_HOME, "opencode/log");
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  return (await Promise.all(names.map((n) => readFile(join(dir, n), "utf8")))).join("");
}
