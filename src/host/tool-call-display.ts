import type { createOpencodeClient } from "@opencode-ai/sdk";

type Client = ReturnType<typeof createOpencodeClient>;
type Result<T> = { data?: T; error?: unknown; response?: Response };
type ToolPart = { id: string; messageID: string; sessionID: string; type: string; callID?: string; state?: { status?: string; input?: Record<string, unknown> } };
/** The SDK's own request client: the v1 client has no route for a part's update (the v2 one has). */
type RawClient = { patch(options: Record<string, unknown>): Promise<Result<unknown>> };

/** The call a tool's permission prompt is linked to: OpenCode links every ask of a tool to that tool's own call. */
export type ToolCallRef = { sessionID: string; messageID: string; callID: string };

/**
 * Lays `shown` over a running tool call's input while `work` runs (a permission prompt is open),
 * where OpenCode 1.18.33's TUI reads it: a `bash` prompt shows the input's `description` and
 * `command`, and the transcript line of a plugin tool shows its string values. Afterwards the
 * input is the model's own again (the history the model reads is built from it). A host that
 * refuses changes nothing but what is shown: `work` runs either way.
 */
export type ToolCallDisplay = {
  during<T>(ref: ToolCallRef, shown: Record<string, string>, work: () => Promise<T>): Promise<T>;
};

/** On the plugin's client: read the call's part, PATCH its input, PATCH it back. */
export function createToolCallDisplay(client: Client, onError: (message: string, error: unknown) => void): ToolCallDisplay {
  const raw = (client as unknown as { _client: RawClient })._client;
  const update = async (part: ToolPart, input: Record<string, unknown>) => {
    const path = { sessionID: part.sessionID, messageID: part.messageID, partID: part.id };
    const result = await raw.patch({
      url: "/session/{sessionID}/message/{messageID}/part/{partID}", path,
      body: { ...part, state: { ...part.state, input } }, headers: { "Content-Type": "application/json" },
    });
    if (result.error !== undefined || (result.response && !result.response.ok)) throw new Error(`OpenCode refused to update the tool call's part (HTTP ${result.response?.status}): ${JSON.stringify(result.error)}`);
  };
  const toolPart = async (ref: ToolCallRef): Promise<ToolPart | undefined> => {
    const result = (await client.session.message({ path: { id: ref.sessionID, messageID: ref.messageID } })) as Result<{ parts: ToolPart[] }>;
    return result.data?.parts.find((p) => p.type === "tool" && p.callID === ref.callID);
  };
  return {
    async during(ref, shown, work) {
      let part: ToolPart | undefined;
      try {
        part = await toolPart(ref);
        if (part?.state?.status !== "running") part = undefined;
        else await update(part, { ...part.state.input, ...shown });
      } catch (error) {
        onError("Could not show what a permission prompt is about", error);
        part = undefined;
      }
      if (!part) return work();
      const own = part.state?.input ?? {};
      try {
        return await work();
      } finally {
        // Read again: the host may have moved the part on (an abort marks it failed) while the prompt was open.
        await toolPart(ref).then((now) => update(now ?? part!, own)).catch((error) => onError("Could not restore a tool call's input after its permission prompt", error));
      }
    },
  };
}
