/**
 * A scripted OpenAI-compatible model on 127.0.0.1 for integration tests.
 *
 * Directive language of the default responder. Directives are lines of the latest user message
 * (the last message with role "user"; but see `directiveText` for a plugin notice that arrives
 * right behind a prompt); each line is `KEYWORD rest-of-line`:
 *
 *   CALL <tool> <json args>   call that tool; several CALL lines => several tool calls in one
 *                             response. Once the tool results come back (the last message is a
 *                             tool result) the model answers `DONE` and then each tool output on
 *                             its own line, in call order.
 *   REPLY <text>              answer with that text (the rest of the line, verbatim).
 *   SLOW <ms>                 wait that long before every answer of this turn (abortable).
 *   FAIL <status> <message>   answer with that HTTP error (400, 429 or 500).
 *   USAGE <json>              report this usage for every answer of this turn (a MockUsage, e.g.
 *                             `USAGE {"input":4000,"output":1000}`) instead of the measured one.
 *
 * Without directives the answer is `ok: <first 40 chars of the user text, whitespace collapsed>`.
 * OpenCode's title-generation requests are recognised by their system prompt and answered with
 * TITLE_REPLY; `requests()` leaves them out unless asked. Every answer reports usage: prompt
 * tokens = the request's JSON length / 4 (`requestTokens`), so a host told a context limit sees
 * the session fill up; a reply's `usage` (or a USAGE directive) replaces those figures.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content?: string | Array<{ type: string; text?: string }> | null;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  tools?: Array<{ type: "function"; function: { name: string; description?: string; parameters?: unknown } }>;
  [key: string]: unknown;
}

export interface MockRequest {
  seq: number;
  /** Date.now() when the request arrived. */
  at: number;
  body: ChatBody;
  isTitle: boolean;
  /** True when the client went away before the answer was complete. */
  aborted: boolean;
  /** Date.now() when the connection closed (answered or gone); unset while open. */
  endedAt?: number;
}

export interface ToolCall {
  name: string;
  args: unknown;
}

/**
 * Token counts one answer reports, as OpenCode reads them from an OpenAI-compatible stream:
 * `input` includes `cacheRead` (OpenCode subtracts it), `output` includes `reasoning`.
 */
export type MockUsage = { input: number; output: number; reasoning?: number; cacheRead?: number };

export type MockReply = { delayMs?: number; usage?: MockUsage } & (
  | { text: string }
  | { toolCalls: ToolCall[]; /** Said before the calls, in the same response. */ text?: string }
  | { error: { status: 400 | 429 | 500; message: string } }
);

export type Responder = (req: MockRequest) => MockReply | Promise<MockReply>;

export interface MockModel {
  /** Base URL for the provider's `baseURL` option, ending in `/v1`. */
  url: string;
  /** Chat requests in arrival order; title requests only with `includeTitle`. */
  requests(options?: { includeTitle?: boolean }): MockRequest[];
  /** Replaces the responder; `setResponder()` with no argument restores the default one. */
  setResponder(responder?: Responder): void;
  inFlight(): { current: number; peak: number };
  close(): Promise<void>;
}

export const TITLE_REPLY = "Mock title";
export const MODEL_ID = "mock-model";

export async function startMockModel(options: { responder?: Responder } = {}): Promise<MockModel> {
  const log: MockRequest[] = [];
  const counts = { current: 0, peak: 0 };
  let responder = options.responder ?? defaultResponder;
  const server = createServer((req, res) => {
    route(req, res).catch((err) => fail(res, 500, String(err)));
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === "GET" && req.url?.startsWith("/v1/models")) return sendModels(res);
    if (req.method === "POST" && req.url?.startsWith("/v1/chat/completions")) return chat(req, res);
    fail(res, 404, `mock model: no route for ${req.method} ${req.url}`);
  }

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(req)) as ChatBody;
    const entry: MockRequest = { seq: log.length + 1, at: Date.now(), body, isTitle: isTitleRequest(body), aborted: false };
    log.push(entry);
    counts.current++;
    counts.peak = Math.max(counts.peak, counts.current);
    const gone = new AbortController();
    res.on("close", () => {
      entry.endedAt = Date.now();
      counts.current--;
      if (!res.writableFinished) entry.aborted = true;
      gone.abort();
    });
    const reply = await responder(entry);
    if (reply.delayMs && !(await sleep(reply.delayMs, gone.signal))) return;
    if (!gone.signal.aborted) answer(res, entry, reply);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: ({ includeTitle = false } = {}) => log.filter((r) => includeTitle || !r.isTitle),
    setResponder: (next) => {
      responder = next ?? defaultResponder;
    },
    inFlight: () => ({ ...counts }),
    close: () => closeServer(server),
  };
}

// ---- default responder and directives ----

export function defaultResponder(req: MockRequest): MockReply {
  if (req.isTitle) return { text: TITLE_REPLY };
  const text = directiveText(req);
  const d = parseDirectives(text);
  const delay = { ...(d.delayMs ? { delayMs: d.delayMs } : {}), ...(d.usage ? { usage: d.usage } : {}) };
  if (d.error) return { ...delay, error: d.error };
  const results = trailingToolResults(req);
  if (results.length > 0) return { ...delay, text: ["DONE", ...results.map((r) => r.content)].join("\n") };
  if (d.calls.length > 0) return { ...delay, toolCalls: d.calls };
  if (d.reply !== undefined) return { ...delay, text: d.reply };
  return { ...delay, text: `ok: ${text.replace(/\s+/g, " ").trim().slice(0, 40)}` };
}

export interface Directives {
  calls: ToolCall[];
  reply?: string;
  delayMs?: number;
  usage?: MockUsage;
  error?: { status: 400 | 429 | 500; message: string };
}

export function parseDirectives(text: string): Directives {
  const d: Directives = { calls: [] };
  for (const line of text.split("\n")) {
    const m = /^\s*(CALL|REPLY|SLOW|FAIL|USAGE)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, keyword, rest] = m;
    if (keyword === "CALL") d.calls.push(parseCall(rest));
    if (keyword === "REPLY") d.reply = rest;
    if (keyword === "SLOW") d.delayMs = Number(rest.trim());
    if (keyword === "FAIL") d.error = parseFail(rest);
    if (keyword === "USAGE") d.usage = JSON.parse(rest) as MockUsage;
  }
  return d;
}

function parseCall(rest: string): ToolCall {
  const m = /^(\S+)\s*(.*)$/.exec(rest.trim());
  if (!m) throw new Error(`mock model: bad CALL directive: ${rest}`);
  return { name: m[1], args: m[2] ? JSON.parse(m[2]) : {} };
}

function parseFail(rest: string): Directives["error"] {
  const m = /^(400|429|500)\s*(.*)$/.exec(rest.trim());
  if (!m) throw new Error(`mock model: bad FAIL directive: ${rest}`);
  return { status: Number(m[1]) as 400 | 429 | 500, message: m[2] || "mock failure" };
}

// ---- request inspection ----

export function messageText(message: ChatMessage): string {
  const c = message.content;
  if (typeof c === "string") return c;
  return (c ?? []).map((p) => p.text ?? "").join("\n");
}

export function lastUserText(req: MockRequest): string {
  const user = req.body.messages.findLast((m) => m.role === "user");
  return user ? messageText(user) : "";
}

/**
 * The user text whose directives this request follows. Usually the last user message; but when the
 * plugin's notice (a settled task or run, as a user message) lands right behind a prompt, before the
 * host asks the model, both are unanswered in one request, and a real model would act on the
 * prompt too. So when the newest of the unanswered user messages (those after the last assistant
 * message, or before the tool calls of a continuation turn) is a plugin notice without directives
 * of its own, the newest earlier one that has directives and is no notice leads instead. Without
 * this, a CALL said while a notice was arriving was answered as the notice and never made (CI
 * failed on it four times). A turn that failed or was aborted before any answer leaves its prompt
 * unanswered too: a notice right behind it repeats that prompt's directives.
 */
export function directiveText(req: MockRequest): string {
  const unanswered = unansweredUserMessages(req.body.messages);
  const newest = unanswered.at(-1);
  if (newest && isPluginNotice(messageText(newest)) && !hasDirectives(messageText(newest))) {
    const prompt = unanswered.findLast((m) => !isPluginNotice(messageText(m)) && hasDirectives(messageText(m)));
    if (prompt) return messageText(prompt);
  }
  return lastUserText(req);
}

/** The user messages in a row that this request answers: at the end, or before a trailing tool-call chain. */
function unansweredUserMessages(messages: ChatMessage[]): ChatMessage[] {
  let end = messages.length;
  if (messages.at(-1)?.role === "tool") {
    while (end > 0 && (messages[end - 1].role === "tool" || (messages[end - 1].role === "assistant" && messages[end - 1].tool_calls?.length))) end--;
  }
  let start = end;
  while (start > 0 && messages[start - 1].role === "user") start--;
  return messages.slice(start, end);
}

/** A message the plugin put in a session (a task's or run's notice): its opening tag starts a line. */
export function isPluginNotice(text: string): boolean {
  return /(^|\n)<(background-task-notification|automation-[a-z]+)[\s>]/.test(text);
}

const DIRECTIVE_LINE = /^\s*(CALL|REPLY|SLOW|FAIL|USAGE)\s+/m;
const hasDirectives = (text: string) => DIRECTIVE_LINE.test(text);

/** The tool messages at the end of the conversation (empty if the last message is not one). */
export function trailingToolResults(req: MockRequest): Array<{ toolCallId: string; content: string }> {
  const out: Array<{ toolCallId: string; content: string }> = [];
  for (const m of [...req.body.messages].reverse()) {
    if (m.role !== "tool") break;
    out.unshift({ toolCallId: m.tool_call_id ?? "", content: messageText(m) });
  }
  return out;
}

export function isToolResult(req: MockRequest): boolean {
  return req.body.messages.at(-1)?.role === "tool";
}

export function systemPrompt(req: MockRequest): string {
  return req.body.messages.filter((m) => m.role === "system").map(messageText).join("\n");
}

/** Every message's text plus tool-call arguments, one per line: for "does X appear anywhere". */
export function allText(req: MockRequest): string {
  return req.body.messages
    .flatMap((m) => [messageText(m), ...(m.tool_calls ?? []).map((c) => `${c.function.name} ${c.function.arguments}`)])
    .join("\n");
}

export function isTitleRequest(body: ChatBody): boolean {
  const system = body.messages.filter((m) => m.role === "system").map(messageText).join("\n");
  return /title generator/i.test(system);
}

// ---- answering ----

let callCounter = 0;

function answer(res: ServerResponse, req: MockRequest, reply: MockReply): void {
  if ("error" in reply) return fail(res, reply.error.status, reply.error.message);
  const message = "toolCalls" in reply ? { content: reply.text, toolCalls: reply.toolCalls.map(toWireCall) } : { content: reply.text };
  const reported = reply.usage ? wireUsage(reply.usage) : usage(req, message);
  if (req.body.stream) return streamAnswer(res, message, reported);
  sendJson(res, 200, completion(message, reported));
}

interface Answer {
  content?: string;
  toolCalls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
}

function toWireCall(call: ToolCall) {
  const id = `call_mock_${++callCounter}`;
  return { id, type: "function" as const, function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } };
}

function streamAnswer(res: ServerResponse, message: Answer, reported: object): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const send = (delta: object, finish: string | null, extra: object = {}) =>
    res.write(`data: ${JSON.stringify(chunk(delta, finish, extra))}\n\n`);
  send({ role: "assistant", content: "" }, null);
  if (message.content) send({ content: message.content }, null);
  message.toolCalls?.forEach((call, index) => send({ tool_calls: [{ index, ...call }] }, null));
  send({}, message.toolCalls ? "tool_calls" : "stop", { usage: reported });
  res.end("data: [DONE]\n\n");
}

function chunk(delta: object, finish: string | null, extra: object) {
  const choices = [{ index: 0, delta, finish_reason: finish }];
  return { id: "chatcmpl-mock", object: "chat.completion.chunk", created: now(), model: MODEL_ID, choices, ...extra };
}

function completion(message: Answer, reported: object) {
  const msg = { role: "assistant", content: message.content ?? null, tool_calls: message.toolCalls };
  const choices = [{ index: 0, message: msg, finish_reason: message.toolCalls ? "tool_calls" : "stop" }];
  return { id: "chatcmpl-mock", object: "chat.completion", created: now(), model: MODEL_ID, choices, usage: reported };
}

/** About 4 characters a token, as seen on the wire: the host judges a session's fullness by these. */
export function requestTokens(body: ChatBody): number {
  return Math.ceil(JSON.stringify(body).length / 4);
}

function usage(req: MockRequest, message: Answer) {
  const prompt = requestTokens(req.body);
  const completion = Math.ceil(JSON.stringify(message).length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A MockUsage in OpenAI's wire shape (cached and reasoning tokens in their `_details`). */
function wireUsage(u: MockUsage) {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
  };
}

function sendModels(res: ServerResponse): void {
  sendJson(res, 200, { object: "list", data: [{ id: MODEL_ID, object: "model", created: now(), owned_by: "mock" }] });
}

function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.end();
  sendJson(res, status, { error: { message, type: "mock_error", code: status } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

// ---- plumbing ----

const now = () => Math.floor(Date.now() / 1000);

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

/** Resolves true after ms, or false as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => resolve(true), ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve(false)), { once: true });
  });
}

function closeServer(server: ReturnType<typeof createServer>): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
