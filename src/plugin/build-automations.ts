import { LazyChannelSink } from "../channels/channel-sink.ts";
import { createAutomations, type AutomationDeps } from "../automations/create-automations.ts";
import type { Options } from "../options/options.ts";
import type { AutomationLayer } from "./lazy-automations.ts";

/**
 * The automation layer with the user's channels, built (not started). Imported only when the
 * project has use for automations: see LazyAutomations.
 */
export async function buildAutomations(
  deps: Omit<AutomationDeps, "channels">, options: Options, onCrash: (message: string, error: unknown) => void,
): Promise<AutomationLayer> {
  const channels = new LazyChannelSink(options.channels);
  await channels.load(deps.store.channelOutbox, (message) => void deps.host.log("warn", message).catch(() => undefined))
    .catch((error) => onCrash("Channels could not start; runs are still told to their sessions", error));
  const service = createAutomations({ ...deps, channels }, options);
  return {
    service,
    start: () => service.start(),
    stop: () => {
      service.stop();
      channels.stop();
    },
  };
}
