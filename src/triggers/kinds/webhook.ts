import { TriggerSpecError } from "../trigger-input.ts";
import { defineKind } from "./trigger-kind.ts";

const WEBHOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export type WebhookSpec = { kind: "webhook"; name: string; /** Where deliveries go, fixed when it is created (webhookHost/webhookPort then). */ url?: string };

/**
 * A signed POST to /hooks/<name>. No source of its own: the machine's one listener takes the
 * deliveries (event-sources.ts). The secret is the plugin's, never the model's.
 */
export const webhookKind = defineKind<WebhookSpec, "event">({
  key: "webhook", kind: "webhook", timing: "event", fields: ["secret"],
  shape: '{"webhook":"deploy"}',
  args: (_s, { text }) => ({ webhook: text, secret: text }),
  parse: (input) => {
    const name = String(input.webhook);
    if (!WEBHOOK_NAME.test(name)) {
      throw new TriggerSpecError(`"webhook": "${name}" must be a name of letters, digits, - and _ (at most 64), e.g. "deploy"; it becomes /hooks/<name>.`);
    }
    if (input.secret !== undefined) {
      throw new TriggerSpecError(`"secret" cannot be given here: the plugin generates the webhook's secret and never shows it to the model. Leave "secret" out; the user reads it with \`opencode-errands webhooks --show-secret\`, or sets their own with \`opencode-errands webhooks set-secret ${name}\` in a terminal. Nothing was created.`);
    }
    return { kind: "webhook", name };
  },
  describe: (spec) => `POST ${spec.url ?? `http://127.0.0.1:4097/hooks/${spec.name}`}`,
  prepare: (spec, ctx) => {
    const url = ctx.webhookUrl(spec.name);
    if (url === undefined) throw new TriggerSpecError("this OpenCode process runs no event triggers, so no webhook can be made here; leave the webhook trigger out.");
    if (ctx.webhookTaken(spec.name)) throw new TriggerSpecError(`the webhook name "${spec.name}" is taken; choose another, e.g. "${spec.name}-2".`);
    spec.url = url;
    return { webhook: spec.name };
  },
});
