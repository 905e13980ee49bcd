import type { ModelRef } from "../core/task.ts";
import { parseDuration, TriggerSpecError } from "../triggers/trigger-input.ts";

/** The `discovery` option: look for useful background work while the user is around but idle. */
export type DiscoveryConfig = {
  every: string; everyMs: number;
  idle: string; idleMs: number;
  agent: string;
  model?: ModelRef;
};

const DEFAULTS = { every: "30m", idle: "10m", agent: "plan" };
const KEYS = ["every", "idle", "agent", "model"];

/** `false`/absent: off; `true`: the defaults; an object: its fields over the defaults. */
export function parseDiscovery(raw: unknown): { discovery?: DiscoveryConfig; problems: string[] } {
  if (raw === undefined || raw === false) return { problems: [] };
  if (raw !== true && (typeof raw !== "object" || raw === null || Array.isArray(raw))) {
    return { problems: [`"discovery" must be false, true or an object like { "every": "30m", "idle": "10m", "agent": "plan", "model": "provider/model" }, got ${JSON.stringify(raw)}`] };
  }
  const input = (raw === true ? {} : raw) as Record<string, unknown>;
  const problems = Object.keys(input).filter((k) => !KEYS.includes(k)).map((k) => `unknown "discovery" field "${k}" (known: ${KEYS.join(", ")})`);
  const text = (key: string, fallback: string) => {
    const value = input[key] ?? fallback;
    if (typeof value === "string" && value.trim() !== "") return value.trim();
    problems.push(`"discovery.${key}" must be a non-empty string, got ${JSON.stringify(value)}`);
    return fallback;
  };
  const duration = (key: string, value: string) => {
    try {
      return parseDuration(value, `discovery.${key}`);
    } catch (error) {
      problems.push(error instanceof TriggerSpecError ? error.message : String(error));
      return 0;
    }
  };
  const every = text("every", DEFAULTS.every);
  const idle = text("idle", DEFAULTS.idle);
  const agent = text("agent", DEFAULTS.agent);
  const model = input.model === undefined ? undefined : parseModel(input.model, problems);
  const discovery: DiscoveryConfig = { every, everyMs: duration("every", every), idle, idleMs: duration("idle", idle), agent, ...(model ? { model } : {}) };
  return problems.length > 0 ? { problems } : { discovery, problems };
}

function parseModel(value: unknown, problems: string[]): ModelRef | undefined {
  const slash = typeof value === "string" ? value.indexOf("/") : -1;
  if (typeof value !== "string" || slash <= 0 || slash === value.length - 1) {
    problems.push(`"discovery.model" must be "provider/model", got ${JSON.stringify(value)}`);
    return undefined;
  }
  return { providerID: value.slice(0, slash), modelID: value.slice(slash + 1) };
}
