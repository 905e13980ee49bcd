const WINDOW_MS = 60_000;

/**
 * At most `perMinute` deliveries per hook in any 60 s window (0: no limit). Each hook keeps the
 * times of its last `perMinute` deliveries in a ring, so a check is O(1) and the memory is fixed.
 */
export class WebhookRateLimit {
  private readonly rings = new Map<string, { times: number[]; next: number }>();

  constructor(private readonly perMinute: number) {
    if (!Number.isInteger(perMinute) || perMinute < 0) throw new Error(`ratePerMinute must be a whole number >= 0 (0 turns the limit off), got ${perMinute}`);
  }

  /** Counts a delivery at `now` and returns 0; or, over the limit, counts nothing and returns the ms until one more fits. */
  take(name: string, now: number): number {
    if (this.perMinute === 0) return 0;
    let ring = this.rings.get(name);
    if (!ring) this.rings.set(name, (ring = { times: new Array<number>(this.perMinute).fill(-Infinity), next: 0 }));
    // The slot about to be overwritten holds the oldest of the last `perMinute` deliveries.
    const wait = ring.times[ring.next]! + WINDOW_MS - now;
    if (wait > 0) return Math.min(wait, WINDOW_MS);
    ring.times[ring.next] = now;
    ring.next = (ring.next + 1) % this.perMinute;
    return 0;
  }
}
