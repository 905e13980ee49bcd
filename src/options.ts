/** The plugin's options, from `["opencode-background-tasks", { ...options }]` in opencode.json. */
export type Options = {
  /** How often the fallback poll checks running tasks, in ms. Default 2000, range 100-60000. */
  pollIntervalMs: number;
  /** background_output's wait when `block: true` has no timeout, in seconds. Default 30, range 1-600. */
  defaultBlockTimeoutSeconds: number;
  /** The longest wait background_output accepts, in seconds. Default 600, range 1-3600. */
  maxBlockTimeoutSeconds: number;
  /** Characters of a result put in the parent's notification. Default 10000, range 200-200000. */
  resultCapChars: number;
  /** Settle tasks from session.idle events; off leaves only polling (for benchmarks). Default true. */
  idleEvents: boolean;
  /** Fork: tool outputs longer than this many characters are truncated. Default 1500, range 200-100000. */
  forkToolOutputLimit: number;
  /** Fork: the most tokens of inherited context. Default 100000, range 1000-2000000. */
  forkTokenCap: number;
};

type NumberRule = { default: number; min: number; max: number; unit: string };

const NUMBER_RULES: Record<Exclude<keyof Options, "idleEvents">, NumberRule> = {
  pollIntervalMs: { default: 2000, min: 100, max: 60_000, unit: "ms" },
  defaultBlockTimeoutSeconds: { default: 30, min: 1, max: 600, unit: "s" },
  maxBlockTimeoutSeconds: { default: 600, min: 1, max: 3600, unit: "s" },
  resultCapChars: { default: 10_000, min: 200, max: 200_000, unit: "characters" },
  forkToolOutputLimit: { default: 1500, min: 200, max: 100_000, unit: "characters" },
  forkTokenCap: { default: 100_000, min: 1000, max: 2_000_000, unit: "tokens" },
};

export const DEFAULT_OPTIONS: Options = {
  ...(Object.fromEntries(Object.entries(NUMBER_RULES).map(([k, r]) => [k, r.default])) as Omit<Options, "idleEvents">),
  idleEvents: true,
};

export class OptionsError extends Error {
  override name = "OptionsError";
}

/** Validates raw options; throws an OptionsError naming every bad option, its value and what is allowed. */
export function parseOptions(raw: unknown): Options {
  if (raw === undefined || raw === null) return { ...DEFAULT_OPTIONS };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new OptionsError(`opencode-background-tasks: options must be an object, got ${JSON.stringify(raw)}`);
  }
  const input = raw as Record<string, unknown>;
  const problems: string[] = [];
  const known = new Set(Object.keys(DEFAULT_OPTIONS));
  for (const key of Object.keys(input)) {
    if (!known.has(key)) problems.push(`unknown option "${key}" (known: ${[...known].join(", ")})`);
  }
  const options = { ...DEFAULT_OPTIONS };
  for (const [key, rule] of Object.entries(NUMBER_RULES) as [keyof typeof NUMBER_RULES, NumberRule][]) {
    const value = input[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value < rule.min || value > rule.max) {
      problems.push(`"${key}" must be a number of ${rule.unit} from ${rule.min} to ${rule.max}, got ${JSON.stringify(value)}`);
    } else options[key] = value;
  }
  if (input.idleEvents !== undefined) {
    if (typeof input.idleEvents !== "boolean") problems.push(`"idleEvents" must be true or false, got ${JSON.stringify(input.idleEvents)}`);
    else options.idleEvents = input.idleEvents;
  }
  if (options.defaultBlockTimeoutSeconds > options.maxBlockTimeoutSeconds) {
    problems.push(`"defaultBlockTimeoutSeconds" (${options.defaultBlockTimeoutSeconds}) must not exceed "maxBlockTimeoutSeconds" (${options.maxBlockTimeoutSeconds})`);
  }
  if (problems.length > 0) throw new OptionsError(`opencode-background-tasks: bad options: ${problems.join("; ")}`);
  return options;
}
