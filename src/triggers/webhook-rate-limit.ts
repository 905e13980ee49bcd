const WINDOW_MS = 60_000;

/**
 * At most `perMinute` events per key (a hook, or a source address) in any 60 s window (0: no
 * limit). Each key keeps the times of its last `perMinute` events in a ring, so a check is O(1);
 * at most `maxKeys` keys are kept, dropping the idle ones first, so the memory is bounded too.
 */
export class WebhookRateLimit {
  private readonly rings = new Map<string, { times: number[]; next: number }>();

  constructor(private readonly perMinute: number, private readonly maxKeys = Infinity) {
    if (!Number.isInteger(perMinute) || perMinute < 0) throw new Error(`ratePerMinute must be a whole number >= 0 (0 turns the limit off), got ${perMinute}`);
  }

  /** Counts an event at `now` and returns 0; or, over the limit, counts nothing and returns the ms until one more fits. */
  take(key: string, now: number): number {
    if (this.perMinute === 0) return 0;
    let ring = this.rings.get(key);
    if (!ring) {
      if (this.rings.size >= this.maxKeys) this.forgetIdle(now);
      this.rings.set(key, (ring = { times: new Array<number>(this.perMinute).fill(-Infinity), next: 0 }));
    }
    // The slot about to be overwritten holds the oldest of the last `perMinute` events.
    const wait = ring.times[ring.next]! + WINDOW_MS - now;
    if (wait > 0) return Math.min(wait, WINDOW_MS);
    ring.times[ring.next] = now;
    ring.next = (ring.next + 1) % this.perMinute;
    return 0;
  }

  /** Drops keys with nothing in the window; if all are busy, the oldest half (a bounded map beats an exact limit). */
  private forgetIdle(now: number): void {
    for (const [key, ring] of this.rings) {
      const newest = ring.times[(ring.next + this.perMinute - 1) % this.perMinute]!;
      if (newest + WINDOW_MS <= now) this.rings.delete(key);
    }
    if (this.rings.size < this.maxKeys) return;
    let drop = Math.ceil(this.rings.size / 2);
    for (const key of this.rings.keys()) {
      if (drop-- <= 0) break;
      this.rings.delete(key);
    }
  }
}
