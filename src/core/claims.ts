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
 * Every lease length of the plugin, in one place, with why it is what it is. A holder on this
 * machine that is gone is replaced at once whatever its lease; the lease only bounds how long a
 * hung holder, or one on another machine, keeps others out. Tests shorten them through
 * constructors (and `OPENCODE_ERRANDS_LEASE_MS` for real-host tests), never by sleeping.
 */
export const LEASES = {
  /**
   * A running task's child: renewed by its holder every third of this for all its tasks in one
   * write, so a live holder never loses it to a slow tick; a dead one's children are taken over
   * (told to continue) within this.
   */
  taskMs: CLAIM_LEASE_MS,
  /** A run from `starting` until it ends: renewed with the tasks; a run stranded by a crash ends within this. */
  runMs: CLAIM_LEASE_MS,
  /** A parent notification or channel delivery being sent: one send takes at most seconds (channels cap an attempt at 10 s). */
  outboxMs: CLAIM_LEASE_MS,
  /** A trigger's source (watcher, poller, listener): renewed by its holder while it runs. */
  triggerMs: 20_000,
  /** A dashboard/CLI command being applied: applying takes under a second; long enough that a busy process is not overtaken. */
  commandMs: 120_000,
  /** A webhook delivery while its run launches (a session and a prompt, seconds at most), generous as a launch may wait on a slow host. */
  deliveryMs: 600_000,
} as const;

/**
 * Names one plugin instance in claims: `host:pid:nonce`. The nonce tells two instances of one
 * process apart (OpenCode loads the plugin once per directory) and a restarted process that got
 * the same pid.
 */
export function newClaimer(): string {
  const nonce = randomUUID().slice(0, 8);
  liveNonces().add(nonce);
  return `${hostname()}:${process.pid}:${nonce}`;
}

/**
 * The claimer has stopped (its plugin instance was disposed): from now on its claims count as a
 * gone holder's in this process, so they are taken over at once rather than after their lease.
 */
export function retireClaimer(claimer: string): void {
  liveNonces().delete(claimer.split(":").at(-1) ?? "");
}

/**
 * The nonces of this process's live claimers, kept on globalThis: OpenCode may load the plugin's
 * module more than once in one process, and every copy must see every claimer.
 */
function liveNonces(): Set<string> {
  const key = Symbol.for("opencode-errands.live-claimers");
  const holder = globalThis as unknown as Record<symbol, Set<string> | undefined>;
  return (holder[key] ??= new Set());
}

/**
 * True when the holder is known to be gone: it ran on this machine in a process that no longer
 * exists. A holder on another machine, or written in a form this version does not read, is never
 * known gone: its lease has to run out.
 */
export function holderGone(holder: string): boolean {
  const pid = pidOnThisHost(holder);
  if (pid === undefined) return false;
  // Our own pid: one of our live instances, else a process that had our pid before (restarted, or the pid reused).
  if (pid === process.pid) return !/^pid\d+-/.test(holder) && !liveNonces().has(holder.split(":").at(-1) ?? "");
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Whether a claim still keeps everyone else out at `now`: within its lease, and its holder not
 * known gone. A claim stamped more than a lease in the future (the clock was set back) is not
 * live: it would keep everyone out for as long as the jump.
 */
export function claimLive(claim: Claim, now: number, leaseMs = CLAIM_LEASE_MS): boolean {
  const age = now - claim.at;
  return age < leaseMs && age > -leaseMs && !holderGone(claim.by);
}

/** Whether `by` may take a row with this claim (none, its own, or one no longer live). */
export function mayTake(claim: Claim | undefined, by: string, now: number, leaseMs: number): boolean {
  return !claim || claim.by === by || !claimLive(claim, now, leaseMs);
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
