import { execFile } from "node:child_process";
import type { ExecRequest } from "./formats/channel-format.ts";
import type { AttemptOutcome } from "./retry-policy.ts";

/**
 * One attempt: runs the program with its arguments as an argv array (no shell, so no character in
 * them means anything but itself), cut off after `timeoutMs` or when `stop` aborts. Never throws.
 * Exit 0 is delivered; a missing program or another exit code will not get better by itself.
 */
export function execOnce(request: ExecRequest, timeoutMs: number, stop: AbortSignal): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    if (stop.aborted) return resolve({ kind: "retry", reason: "stopped before an answer" });
    let timedOut = false;
    let child: ReturnType<typeof execFile>;
    try {
      child = execFile(request.program, request.args, { shell: false, windowsHide: true, maxBuffer: 64 * 1024 }, (error) => {
        clearTimeout(timer);
        stop.removeEventListener("abort", onStop);
        resolve(outcomeOf(request.program, error, timedOut, stop.aborted, timeoutMs));
      });
    } catch (error) {
      // An argument the OS cannot take (a NUL byte): trying again cannot help.
      return resolve({ kind: "fail", reason: `${request.program} could not be started (${(error as { code?: string }).code ?? "bad arguments"})` });
    }
    const onStop = () => child.kill();
    stop.addEventListener("abort", onStop);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill();
    }, timeoutMs);
    timer.unref?.();
  });
}

function outcomeOf(program: string, error: (Error & { code?: unknown }) | null, timedOut: boolean, stopped: boolean, timeoutMs: number): AttemptOutcome {
  if (stopped) return { kind: "retry", reason: "stopped before an answer" };
  if (timedOut) return { kind: "retry", reason: `${program} did not end within ${Math.round(timeoutMs / 1000)} s` };
  if (!error) return { kind: "delivered" };
  if (error.code === "ENOENT") return { kind: "fail", reason: `${program} is not on the PATH of the OpenCode process: install it, or remove the channel` };
  const code = typeof error.code === "number" ? `exit code ${error.code}` : typeof error.code === "string" && /^[A-Z_]{1,40}$/.test(error.code) ? error.code : "an error";
  return { kind: "fail", reason: `${program} ended with ${code}` };
}
