/**
 * Conversations shaped exactly like the ones OpenCode stores (typed with the SDK's own types, so a
 * made-up shape does not compile), and a generator of large ones for tests and the benchmark.
 */
import type { AssistantMessage, Message, Part, ToolPart, UserMessage } from "@opencode-ai/sdk";
import { countTextTokens } from "../../src/fork/token-count.ts";

export type HostMessage = { info: Message; parts: Part[] };

export const SESSION_ID = "ses_parent";
const BASE_TIME = 1_700_000_000_000;
const MODEL = { providerID: "mock", modelID: "mock-model" };
const NO_TOKENS = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } };

export function userMessage(id: string, text: string, extraParts: Part[] = []): HostMessage {
  const info: UserMessage = { id, sessionID: SESSION_ID, role: "user", time: { created: timeOf(id) }, agent: "build", model: MODEL };
  return { info, parts: [textPart(id, `${id}_text`, text), ...extraParts] };
}

export function assistantMessage(
  id: string,
  parentID: string,
  parts: Part[],
  extra: Partial<AssistantMessage> = {},
): HostMessage {
  const created = timeOf(id);
  const info: AssistantMessage = {
    id, sessionID: SESSION_ID, role: "assistant", time: { created, completed: created + 500 }, parentID,
    ...MODEL, mode: "build", path: { cwd: "/repo", root: "/repo" }, cost: 0, tokens: NO_TOKENS, finish: "stop", ...extra,
  };
  const framed: Part[] = [{ id: `${id}_start`, sessionID: SESSION_ID, messageID: id, type: "step-start", snapshot: "4b825dc6" }, ...parts];
  framed.push({ id: `${id}_finish`, sessionID: SESSION_ID, messageID: id, type: "step-finish", reason: extra.finish ?? "stop", cost: 0, tokens: NO_TOKENS });
  return { info, parts: framed };
}

export function textPart(messageID: string, id: string, text: string): Part {
  return { id, sessionID: SESSION_ID, messageID, type: "text", text, time: { start: timeOf(messageID), end: timeOf(messageID) + 1 } };
}

export function reasoningPart(messageID: string, id: string, text: string): Part {
  return { id, sessionID: SESSION_ID, messageID, type: "reasoning", text, time: { start: timeOf(messageID) } };
}

export type ToolCall = { tool: string; callID: string; input: Record<string, unknown>; output: string; status?: "completed" | "error" };

export function toolPart(messageID: string, id: string, call: ToolCall): ToolPart {
  const time = { start: timeOf(messageID), end: timeOf(messageID) + 100 };
  const state: ToolPart["state"] =
    call.status === "error"
      ? { status: "error", input: call.input, error: call.output, time }
      : { status: "completed", input: call.input, output: call.output, title: call.tool, metadata: { truncated: false }, time };
  return { id, sessionID: SESSION_ID, messageID, type: "tool", callID: call.callID, tool: call.tool, state };
}

/** What a compaction leaves: the request (a user message) and the finished summary answering it. */
export function compactionPair(requestID: string, summaryID: string, summary: string): HostMessage[] {
  const request = userMessage(requestID, "", [{ id: `${requestID}_compaction`, sessionID: SESSION_ID, messageID: requestID, type: "compaction", auto: true }]);
  request.parts = request.parts.filter((part) => part.type !== "text");
  const answer = assistantMessage(summaryID, requestID, [textPart(summaryID, `${summaryID}_text`, summary)], { summary: true, mode: "compaction" });
  return [request, answer];
}

/** Ids sort in creation order, as OpenCode's do; the time is derived from the id's number. */
function timeOf(id: string): number {
  const digits = id.match(/\d+/g)?.join("") ?? "0";
  return BASE_TIME + (Number(digits.slice(0, 12)) % 1e9);
}

export type SyntheticHistoryOptions = {
  /** Approximate size of the whole history, in tokens, before any truncation. */
  targetTokens: number;
  seed?: number;
  /** Assistant steps (messages) per user turn. Default 4. */
  stepsPerTurn?: number;
  /** Largest tool output, in characters; outputs range from a few hundred to this. Default 24,000. */
  maxToolOutputChars?: number;
  /** Put a compaction (request and summary) just before this turn. */
  compactionBeforeTurn?: number;
};

/** A deterministic conversation of about `targetTokens` tokens: turns of tool-using assistant steps. */
export function generateHistory(options: SyntheticHistoryOptions): HostMessage[] {
  const rng = seededRandom(options.seed ?? 1);
  const content = new ContentMaker(rng);
  const targetChars = options.targetTokens * charsPerToken();
  const messages: HostMessage[] = [];
  let chars = 0;
  for (let turn = 0; chars < targetChars; turn++) {
    if (turn === options.compactionBeforeTurn) messages.push(...compactionOf(turn, content));
    const turnMessages = makeTurn(turn, options, targetChars - chars, content, rng);
    chars += turnMessages.reduce((sum, message) => sum + textLength(message), 0);
    messages.push(...turnMessages);
  }
  return messages;
}

/** A question and its answering steps; it ends early, with a final answer, once `room` is used. */
function makeTurn(turn: number, options: SyntheticHistoryOptions, room: number, content: ContentMaker, rng: () => number): HostMessage[] {
  const userID = `msg_${pad(turn)}_100`;
  const messages = [userMessage(userID, content.sentences(2 + Math.floor(rng() * 6)))];
  const steps = options.stepsPerTurn ?? 4;
  let used = textLength(messages[0]);
  for (let step = 1; step <= steps; step++) {
    const id = `msg_${pad(turn)}_${100 + step}`;
    const last = step === steps || used >= room;
    const parts: Part[] = [reasoningPart(id, `${id}_reasoning`, content.sentences(3)), textPart(id, `${id}_text`, content.sentences(2))];
    if (!last) parts.push(...toolCalls(id, options.maxToolOutputChars ?? 24_000, content, rng));
    messages.push(assistantMessage(id, userID, parts, { finish: last ? "stop" : "tool-calls" }));
    used += textLength(messages[messages.length - 1]);
    if (last) break;
  }
  return messages;
}

function toolCalls(messageID: string, maxChars: number, content: ContentMaker, rng: () => number): Part[] {
  const count = 1 + Math.floor(rng() * 2);
  return Array.from({ length: count }, (_, index) => {
    const kind = Math.floor(rng() * 3);
    const size = 300 + Math.floor(rng() * rng() * maxChars);
    const path = content.path();
    const call =
      kind === 0
        ? { tool: "read", input: { filePath: path }, output: content.code(size) }
        : kind === 1
          ? { tool: "bash", input: { command: `npm test -- ${path}`, description: "Run the tests" }, output: content.log(size) }
          : { tool: "grep", input: { pattern: content.word(), path: "/repo/src" }, output: content.grep(size) };
    return toolPart(messageID, `${messageID}_tool${index}`, { ...call, callID: `call_${messageID}_${index}` });
  });
}

function compactionOf(turn: number, content: ContentMaker): HostMessage[] {
  return compactionPair(`msg_${pad(turn)}_000`, `msg_${pad(turn)}_001`, "Summary: " + content.sentences(20));
}

function textLength(message: HostMessage): number {
  let total = 0;
  for (const part of message.parts) {
    if (part.type === "text" || part.type === "reasoning") total += part.text.length;
    if (part.type === "tool" && part.state.status === "completed") total += part.state.output.length;
  }
  return total;
}

let calibratedCharsPerToken: number | undefined;

/** Measured once on a sample of the generated content, so a target in tokens maps to characters. */
function charsPerToken(): number {
  if (calibratedCharsPerToken === undefined) {
    const content = new ContentMaker(seededRandom(99));
    const sample = content.code(40_000) + content.log(40_000) + content.grep(40_000) + content.sentences(400);
    calibratedCharsPerToken = sample.length / countTextTokens(sample);
  }
  return calibratedCharsPerToken;
}

const WORDS = (
  "the a user session task result value error config parent child message output input file path " +
  "token limit cap fork tool call state read write bash grep edit test build run start stop queue " +
  "event status idle busy retry abort cancel resume notify store schema record index cache buffer " +
  "stream handler request response server client plugin model agent prompt context history summary"
).split(" ");

class ContentMaker {
  constructor(private readonly rng: () => number) {}

  word(): string {
    return WORDS[Math.floor(this.rng() * WORDS.length)];
  }

  number(): string {
    return String(Math.floor(this.rng() * 100_000));
  }

  path(): string {
    return `/repo/src/${this.word()}/${this.word()}-${this.word()}.ts`;
  }

  sentences(count: number): string {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const length = 6 + Math.floor(this.rng() * 12);
      const words = Array.from({ length }, () => (this.rng() < 0.08 ? this.number() : this.word()));
      out.push(words[0].charAt(0).toUpperCase() + words.join(" ").slice(1) + ".");
    }
    return out.join(" ");
  }

  code(chars: number): string {
    return this.lines(chars, (n) => `${n}\t  const ${this.word()}${cap(this.word())} = await ${this.word()}.${this.word()}(${this.number()}, "${this.word()}");`);
  }

  log(chars: number): string {
    return this.lines(chars, (n) => `[${n}] ${this.rng() < 0.1 ? "FAIL" : "ok"} ${this.path()} > ${this.sentences(1)} (${this.number()} ms)`);
  }

  grep(chars: number): string {
    return this.lines(chars, () => `${this.path()}:${this.number()}:  ${this.word()}(${this.word()}, ${this.word()}) // ${this.word()} ${this.word()}`);
  }

  private lines(chars: number, line: (n: number) => string): string {
    const out: string[] = [];
    let length = 0;
    for (let n = 1; length < chars; n++) {
      const next = line(n);
      out.push(next);
      length += next.length + 1;
    }
    return out.join("\n").slice(0, chars);
  }
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function pad(n: number): string {
  return String(n).padStart(6, "0");
}

/** mulberry32: small, fast, and the same sequence everywhere for a seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
