type LoopState = { lastCall?: string; repeats: number; quietAnswers: number; seen: Set<string> };

/**
 * Spots a child going round in circles: the same tool call with the same input `limit` times in a
 * row, or `limit` answers in a row without a tool call in between. Returns what repeated, once.
 */
export class LoopDetector {
  private state = new Map<string, LoopState>();

  constructor(private limit: number) {}

  /** A finished tool call (each call id counted once). */
  onToolCall(taskId: string, callID: string, tool: string, inputKey: string): string | undefined {
    const state = this.entry(taskId);
    if (state.seen.has(callID)) return undefined;
    state.seen.add(callID);
    state.quietAnswers = 0;
    const call = `${tool} ${inputKey}`;
    state.repeats = state.lastCall === call ? state.repeats + 1 : 1;
    state.lastCall = call;
    if (state.repeats === this.limit) return `the same tool call ${this.limit} times in a row: ${clip(call)}`;
    return undefined;
  }

  /** A finished assistant message; `calledTools` when it ended in tool calls. */
  onAnswer(taskId: string, messageID: string, calledTools: boolean): string | undefined {
    const state = this.entry(taskId);
    if (calledTools || state.seen.has(messageID)) return undefined;
    state.seen.add(messageID);
    state.lastCall = undefined;
    state.quietAnswers += 1;
    if (state.quietAnswers === this.limit) return `${this.limit} answers in a row without a new tool call`;
    return undefined;
  }

  release(taskId: string): void {
    this.state.delete(taskId);
  }

  size(): number {
    return this.state.size;
  }

  private entry(taskId: string): LoopState {
    let state = this.state.get(taskId);
    if (!state) this.state.set(taskId, (state = { repeats: 0, quietAnswers: 0, seen: new Set() }));
    return state;
  }
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
