import { spawn } from "node:child_process";
import { once } from "node:events";

/** Every run that starts `opencode serve` (tests, benchmarks) serialises on this lock. */
export const REALHOST_LOCK = "/tmp/ocbt-realhost.lock";

/**
 * Takes the real-host lock and holds it until the returned release is called: a `flock` child
 * holds it while its stdin stays open. Waits while another run holds it. Do not call this under
 * an outer `flock` of the same file: that would wait for itself.
 */
export async function holdRealhostLock(): Promise<() => void> {
  const holder = spawn("flock", [REALHOST_LOCK, "sh", "-c", "echo held; cat > /dev/null"], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = once(holder, "exit").then(([code]) => {
    throw new Error(`flock ${REALHOST_LOCK} exited with ${code} before taking the lock`);
  });
  await Promise.race([once(holder.stdout!, "data"), exited]);
  exited.catch(() => undefined);
  return () => holder.stdin!.end();
}
