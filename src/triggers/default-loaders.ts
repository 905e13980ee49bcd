import type { SourceLoaders } from "./source-loaders.ts";
import { TRIGGER_KINDS } from "./kinds/registry.ts";
import type { KindEnv, TriggerKind } from "./kinds/trigger-kind.ts";
import type { StartSource } from "./trigger-source.ts";

/** Each registered kind's own start (it imports its module when first called), and the real listener. */
export function defaultLoaders(env: KindEnv): SourceLoaders {
  const loaders: SourceLoaders = { webhookListener: async () => (await import("./webhook-listener.ts")).startWebhookListener };
  for (const kind of TRIGGER_KINDS as readonly TriggerKind[]) {
    const start = kind.start;
    if (start) loaders[kind.kind] = async () => ((spec, ctx) => start(spec, ctx, env)) as StartSource<never>;
  }
  return loaders;
}
