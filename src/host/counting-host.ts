import type { Host } from "./host.ts";

/** Wraps a Host so that every call to it is counted, by method (for the load benchmark). */
export function countingHost(host: Host): { host: Host; counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  const wrapped = {} as Record<string, unknown>;
  for (const name of Object.keys(host) as (keyof Host)[]) {
    const method = host[name] as (...args: unknown[]) => unknown;
    wrapped[name] = (...args: unknown[]) => {
      counts[name] = (counts[name] ?? 0) + 1;
      return method.apply(host, args);
    };
  }
  return { host: wrapped as unknown as Host, counts };
}
