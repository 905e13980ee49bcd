import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

/**
 * How long a claim on an outbox notification holds while its claimer may still be sending it.
 * A send is one `promptAsync` (well under a second), so a claim this old belongs to an instance
 * that stopped or hung; another may then take the notification over (after checking the parent).
 */
export const CLAIM_LEASE_MS = 30_000;

/** Names one plugin instance: machine, process and a nonce (two instances may share a process). */
export function newClaimer(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * A claim still held by someone else: its lease has not run out and its process is not known to
 * be gone. A process is known gone only on this machine, when it no longer exists (after a crash
 * and restart the new process takes over at once instead of waiting out the lease).
 */
export function claimHeldByOther(claim: { by: string; at: number }, self: string, now: number): boolean {
  if (claim.by === self) return false; // our own leftover: nothing of ours is sending it now
  return now - claim.at < CLAIM_LEASE_MS && !processGone(claim.by);
}

function processGone(claimer: string): boolean {
  const parts = claimer.split(":");
  const pid = Number(parts.at(-2));
  if (parts.slice(0, -2).join(":") !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
