/**
 * Server-sent events as OpenCode's `/event` sends them (`data: {json}` then a blank line), parsed
 * into the JSON objects. Lines other than `data:` (comments, `event:`, `id:`, `retry:`) are skipped,
 * and so is data that is not JSON: every yielded value is what the server serialised. An abort
 * through `signal` ends the stream quietly.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", cancel, { once: true });
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read().catch((error: unknown) => {
        if (signal?.aborted) return { done: true as const, value: undefined };
        throw error;
      });
      if (done || signal?.aborted) break;
      buffer += decoder.decode(value, { stream: true });
      // A chunk may end inside a line, or between the "\r" and "\n" of one line break.
      const cut = buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
      const lines = buffer.slice(0, cut).split(/\r\n|\r|\n/);
      buffer = lines.pop()! + buffer.slice(cut);
      for (const line of lines) {
        if (line === "") {
          const event = data.length ? parseJson(data.join("\n")) : undefined;
          data = [];
          if (event !== undefined) yield event;
        } else if (line.startsWith("data:")) {
          data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
        }
      }
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
    cancel();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
