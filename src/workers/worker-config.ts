/**
 * The `workers` option: other OpenCode servers (`opencode serve`) that may run children.
 * A worker's password never appears in the options: only the name of the environment variable
 * that holds it. Nothing here quotes a password, and a URL with credentials in it is refused.
 */
import { posix, win32 } from "node:path";
import { checkHttpUrl, kindOf } from "../core/option-checks.ts";

export type WorkerConfig = {
  /** Letters, digits, "-" or "_"; what `background_task`'s `worker` argument names. */
  name: string;
  /** The worker's base URL (http or https), without a trailing slash. */
  url: string;
  /** Basic auth user name. Default "opencode" (what `opencode serve` expects). */
  username: string;
  /** Environment variable holding the worker's OPENCODE_SERVER_PASSWORD; no auth when absent. */
  passwordEnv?: string;
  /** The project's checkout on the worker (absolute path on that machine). */
  directory: string;
  /** Children this worker may run at once: a whole number 1-500. Default 4. */
  capacity: number;
};

const NAME = /^[A-Za-z0-9_-]{1,40}$/;
const RESERVED = ["local", "auto"];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const KEYS = ["name", "url", "username", "passwordEnv", "directory", "capacity"];
const MAX_WORKERS = 50;
const DEFAULT_CAPACITY = 4;
const MAX_CAPACITY = 500;
const EXAMPLE = `{ "name": "box", "url": "http://10.0.0.5:4096", "passwordEnv": "BOX_OPENCODE_PASSWORD", "directory": "/srv/checkouts/myrepo" }`;

/** Reads the raw `workers` option. Problems name the worker, the key at fault and the fix. */
export function parseWorkers(raw: unknown): { workers: WorkerConfig[]; problems: string[] } {
  const workers: WorkerConfig[] = [];
  const problems: string[] = [];
  if (raw === undefined) return { workers, problems };
  if (!Array.isArray(raw)) {
    problems.push(`"workers" must be an array of workers, e.g. [${EXAMPLE}], got ${kindOf(raw)}`);
    return { workers, problems };
  }
  if (raw.length > MAX_WORKERS) problems.push(`"workers" may hold at most ${MAX_WORKERS} workers, got ${raw.length}`);
  raw.slice(0, MAX_WORKERS).forEach((value, index) => {
    const worker = parseWorker(index, value, problems);
    if (!worker) return;
    if (workers.some((w) => w.name === worker.name)) problems.push(`"workers[${index}].name" "${worker.name}" is used twice: give each worker its own name`);
    else workers.push(worker);
  });
  return { workers, problems };
}

/**
 * The worker's password from its environment variable, read once at start. An unset variable
 * concerns that worker only: its connection reports it, the other workers go on.
 */
export function readWorkerPassword(worker: WorkerConfig, env: NodeJS.ProcessEnv = process.env): { password?: string; error?: string } {
  if (!worker.passwordEnv) return {};
  const password = env[worker.passwordEnv];
  if (password) return { password };
  return { error: `worker "${worker.name}": the environment variable ${worker.passwordEnv} is not set; set it to that server's OPENCODE_SERVER_PASSWORD before starting OpenCode` };
}

function parseWorker(index: number, value: unknown, problems: string[]): WorkerConfig | undefined {
  const before = problems.length;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push(`"workers[${index}]" must be an object like ${EXAMPLE}, got ${kindOf(value)}`);
    return undefined;
  }
  const input = value as Record<string, unknown>;
  const name = checkName(index, input.name, problems);
  const at = `workers[${index}]${name ? ` ("${name}")` : ""}`;
  for (const key of Object.keys(input)) {
    if (key === "password") problems.push(`"${at}" must not hold a password: remove "password" and name the environment variable that holds it with "passwordEnv"`);
    else if (!KEYS.includes(key)) problems.push(`"${at}" has an unknown key "${key.slice(0, 40)}" (known: ${KEYS.join(", ")})`);
  }
  const url = checkUrl(at, input.url, problems);
  const username = checkUsername(at, input.username, problems);
  const passwordEnv = checkPasswordEnv(at, input.passwordEnv, problems);
  const directory = checkDirectory(at, input.directory, problems);
  const capacity = checkCapacity(at, input.capacity, problems);
  if (problems.length > before || !name || !url || !directory) return undefined;
  return { name, url, username, ...(passwordEnv ? { passwordEnv } : {}), directory, capacity };
}

function checkName(index: number, value: unknown, problems: string[]): string | undefined {
  if (typeof value !== "string" || !NAME.test(value)) {
    const got = typeof value === "string" ? JSON.stringify(value.slice(0, 60)) : kindOf(value);
    problems.push(`"workers[${index}].name" must be 1-40 letters, digits, "-" or "_", e.g. "box", got ${got}`);
    return undefined;
  }
  if (RESERVED.includes(value.toLowerCase())) {
    problems.push(`"workers[${index}].name" must not be "${value}": "local" and "auto" are reserved for the worker argument; pick another name`);
    return undefined;
  }
  return value;
}


function checkUsername(at: string, value: unknown, problems: string[]): string {
  if (value === undefined) return "opencode";
  if (typeof value !== "string" || value === "" || value.includes(":") || value.length > 100) {
    problems.push(`"${at}.username" must be a user name without ":" (OpenCode's default is "opencode"), got ${kindOf(value)}`);
  }
  return String(value);
}

function checkPasswordEnv(at: string, value: unknown, problems: string[]): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !ENV_NAME.test(value)) {
    problems.push(`"${at}.passwordEnv" must be the name of an environment variable, e.g. "BOX_OPENCODE_PASSWORD" (letters, digits, "_"), got ${kindOf(value)}`);
    return undefined;
  }
  return value;
}

function checkDirectory(at: string, value: unknown, problems: string[]): string | undefined {
  if (typeof value !== "string" || !(posix.isAbsolute(value) || win32.isAbsolute(value))) {
    const got = typeof value === "string" ? JSON.stringify(value.slice(0, 80)) : kindOf(value);
    problems.push(`"${at}.directory" must be the absolute path of the project's checkout on the worker, e.g. "/srv/checkouts/myrepo", got ${got}`);
    return undefined;
  }
  return value;
}

function checkCapacity(at: string, value: unknown, problems: string[]): number {
  if (value === undefined) return DEFAULT_CAPACITY;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_CAPACITY) {
    const got = typeof value === "number" ? String(value) : kindOf(value);
    problems.push(`"${at}.capacity" must be a whole number of children from 1 to ${MAX_CAPACITY} (default ${DEFAULT_CAPACITY}), got ${got}`);
  }
  return Number(value);
}

/** What a value is, without its content (it may be a secret put in the wrong place). */

function checkUrl(at: string, value: unknown, problems: string[]): string | undefined {
  const url = checkHttpUrl(at, value, problems, {
    what: "the worker's http(s) URL", example: "http://10.0.0.5:4096", credentials: 'use "username" and "passwordEnv"',
  });
  if (url && (url.search || url.hash)) {
    problems.push(`"${at}.url" must not have a query or fragment: give the server's base URL, e.g. "${url.origin}"`);
    return undefined;
  }
  return url?.href.replace(/\/+$/, "");
}
