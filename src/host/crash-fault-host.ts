import type { Host } from "./host.ts";

/** The environment variable that arms a crash point, and the points it may name. */
export const CRASH_FAULT_ENV = "OPENCODE_ERRANDS_FAULT";
const FAULTS = ["exit-after-claim", "exit-after-send", "exit-before-run-task"] as const;

// What the notifier sends, and nothing else: the outbox marks every notification's payload (`text`,
// the synthetic part; `visible` is the person's line) with its key.
const NOTIFICATION = '<background-task-notification key="';

/**
 * Test-only crash points around a parent notification, for the real-host test that kills OpenCode
 * there (test/integration/notify-crash.test.ts): `exit-after-claim` dies as the notifier sends,
 * before the prompt reaches the host (the outbox claim is committed, nothing is sent);
 * `exit-after-send` dies a second after the host accepted it (the delivery is not yet confirmed);
 * `exit-before-run-task` dies as an automation run creates its child's session: the run is claimed
 * `starting`, its task not yet saved (test/integration/ownership.test.ts).
 * Any other value, or none, returns the host unchanged. `die` kills the process, as in a crash.
 */
export function withCrashFault(host: Host, fault: string | undefined, die: (afterMs: number) => void = sigkill): Host {
  if (!FAULTS.includes(fault as (typeof FAULTS)[number])) return host;
  const never = () => new Promise<never>(() => {}); // nothing after the crash point may run
  const prompt: Host["prompt"] = async (input) => {
    if (fault === "exit-before-run-task" || !input.text.includes(NOTIFICATION)) return host.prompt(input);
    if (fault === "exit-after-send") await host.prompt(input); // the host may store it a moment later: let it
    die(fault === "exit-after-send" ? 1000 : 0);
    return never();
  };
  const createSession: Host["createSession"] = async (input) => {
    if (fault !== "exit-before-run-task" || !input.title.includes("(automation run #")) return host.createSession(input);
    die(0);
    return never();
  };
  const faulty = { prompt, createSession } as Record<PropertyKey, unknown>;
  return new Proxy(host, { get: (target, key, receiver) => (key in faulty ? faulty[key] : Reflect.get(target, key, receiver)) });
}

function sigkill(afterMs: number): void {
  setTimeout(() => process.kill(process.pid, "SIGKILL"), afterMs);
}
