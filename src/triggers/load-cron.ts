import { createRequire } from "node:module";

type Croner = typeof import("croner");

let loaded: Croner | undefined;

/**
 * croner's Cron, loaded at the first cron trigger: most OpenCode processes have none and must not
 * pay for it. Loaded synchronously, like gpt-tokenizer, because parsing a trigger and computing
 * its next time are synchronous (the scheduler runs them inside a store transaction).
 */
export function cronClass(): Croner["Cron"] {
  loaded ??= createRequire(import.meta.url)("croner") as Croner;
  return loaded.Cron;
}
