import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

/**
 * The one claim rule of the plugin. A row that one process works on at a time (a parent
 * notification being sent, a channel delivery, a webhook delivery firing, a dashboard or CLI
 * command being applied, a trigger's source running) carries a claim: who holds it and when it
 * was taken (or last renewed). Everyone decides with the functions below, so every table has the
 * same identity, the same liveness check and a lease, and nothing stays claimed forever.
 */
export type Claim = { by: string; at: number };

/**
 * The default lease: a claim this old belongs to a holder that stopped, hung or runs on another
 * machine that can no longer be asked; another may take the row over. Work that takes longer
 * renews its claim (trigger leases) or uses a longer lease.
 */
export const CLAIM_LEASE_MS = 30_000;

/**
 * Names one plugin instance in claims: `host:pid:nonce`. The nonce tells two instances of one
 * process apart (OpenCode loads the plugin once per directory) and a restarted process that got
 * the same pid.
 */
export function newClaimer(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * True when the holder is known to be gone: it ran on this machine in a process that no longer
 * exists. A holder on another machine, or written in a form this version does not read, is never
 * known gone: its lease has to run out.
 */
export function holderGone(holder: string): boolean {
  const pid = pidOnThisHost(holder);
  if (pid === undefined || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Whether a claim still keeps everyone else out at `now`: within its lease, and its holder not known gone. */
export function claimLive(claim: Claim, now: number, leaseMs = CLAIM_LEASE_MS): boolean {
  return now - claim.at < leaseMs && !holderGone(claim.by);
}

/**
 * A live claim of another holder. `self`'s own claim is never held against it: it is a
 * leftover of this instance (nothing of ours is working on it unless the caller knows so).
 */
export function claimHeldByOther(claim: Claim, self: string, now: number, leaseMs = CLAIM_LEASE_MS): boolean {
  return claim.by !== self && claimLive(claim, now, leaseMs);
}

/** The pid of a `host:pid:nonce` holder on this machine; also reads the `pid<N>-<hex>` form of earlier versions (same machine). */
function pidOnThisHost(holder: string): number | undefined {
  const legacy = /^pid(\d+)-[0-9a-f]+$/.exec(holder);
  if (legacy) return Number(legacy[1]);
  const parts = holder.split(":");
  const pid = Number(parts.at(-2));
  if (parts.length < 3 || parts.slice(0, -2).join(":") !== hostname() || !Number.isInteger(pid) || pid <= 0) return undefined;
  return pid;
}
