/**
 * Captures session histories from a real `opencode serve` (driven by the scripted mock model of
 * the integration harness) and stores them as fixtures for the fork-processing unit tests:
 *
 *   test/fixtures/histories/tool-outputs.json  turns with real tool calls: a 9,000-character bash
 *                                              output, a short bash, a read, a failing read, texts
 *   test/fixtures/histories/compacted.json     turns, a manual compaction (session.summarize), and
 *                                              turns after it
 *
 * Each file holds `messages`, the session as `client.session.messages` lists it (what the plugin's
 * fork preparer reads). compacted.json also holds `modelView`: the messages OpenCode handed to
 * `experimental.chat.messages.transform` for the session's last model request (what the plugin's
 * fork transform rewrites), recorded by scripts/fork-fixtures/model-view-probe.
 *
 * The mock's answers are fixed, so only ids and times change between captures; the temp
 * directory of the run is replaced by FIXTURE_ROOT (scripts/fixture-text.ts). Run: npx tsx scripts/capture-fork-fixtures.ts
 */
import { mkdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fixtureText } from "./fixture-text.ts";
import { startStack, call, waitUntil, PACKAGE_DIR, type Stack } from "../test/harness/plugin-stack.ts";
import {
  defaultResponder,
  systemPrompt,
  trailingToolResults,
  type MockReply,
  type MockRequest,
} from "../test/harness/mock-model.ts";

const OUT_DIR = fileURLToPath(new URL("../test/fixtures/histories/", import.meta.url));
const PROBE_DIR = fileURLToPath(new URL("./fork-fixtures/model-view-probe", import.meta.url));
const OPENCODE_VERSION = (JSON.parse(readFileSync(join(PACKAGE_DIR, "node_modules/opencode-ai/package.json"), "utf8")) as { version: string }).version;

/** Replaces the run's temp root (which holds the project and the home) in every stored string. */
const MAX_FIXTURE_BYTES = 100_000;

export const BIG_OUTPUT_CHARS = 9_000;
const BIG_COMMAND = `head -c ${BIG_OUTPUT_CHARS} /dev/zero | tr '\\0' x`;
const NOTES = "Fixture notes\nline two: alpha\nline three: beta\n";

export const SUMMARY_TEXT = [
  "## Goal",
  "Capture real OpenCode histories as fork fixtures.",
  "## Progress",
  "- The user asked to remember the codeword PLUM-42.",
  `- bash printed ${BIG_OUTPUT_CHARS} x characters; README.md was read.`,
  "## Next",
  "- Continue with the next request.",
].join("\n");

/**
 * The harness's default responder, except: a compaction request gets SUMMARY_TEXT, and after tool
 * results the answer names long results by their length instead of echoing them (the default
 * would copy the 9,000 characters into a text part too).
 */
function responder(req: MockRequest): MockReply {
  if (!req.isTitle && /context summarization agent/i.test(systemPrompt(req))) return { text: SUMMARY_TEXT };
  const results = trailingToolResults(req);
  if (!req.isTitle && results.length > 0) {
    const lines = results.map((r) => (r.content.length <= 200 ? r.content : `(${r.content.length} characters)`));
    return { text: ["DONE", ...lines].join("\n") };
  }
  return defaultResponder(req);
}

type Message = { info: Record<string, any>; parts: Array<Record<string, any>> };

async function captureToolOutputs(stack: Stack): Promise<Message[]> {
  writeFileSync(join(stack.server.projectDir, "notes.txt"), NOTES);
  const id = await stack.newSession("fixture: tool outputs");
  await stack.say(id, "Hello.\nREPLY Hello, I am ready.");
  await stack.say(id, call("bash", { command: BIG_COMMAND, description: "Print 9000 characters" }));
  await stack.say(
    id,
    [
      call("bash", { command: "printf 'hello from bash\\n'", description: "Print a short line" }),
      call("read", { filePath: join(stack.server.projectDir, "notes.txt") }),
    ].join("\n"),
  );
  await stack.say(id, call("read", { filePath: join(stack.server.projectDir, "missing.txt") }));
  await stack.say(id, "Thanks.\nREPLY All four tool calls are done.");
  return stack.messages(id);
}

async function captureCompacted(stack: Stack, probeFile: string): Promise<{ messages: Message[]; modelView: Message[] }> {
  const id = await stack.newSession("fixture: compacted");
  const client = stack.server.client;
  await stack.say(id, "Remember the codeword PLUM-42.\nREPLY Noted: PLUM-42.");
  await stack.say(id, call("bash", { command: BIG_COMMAND, description: "Print 9000 characters" }));
  await stack.say(id, call("read", { filePath: join(stack.server.projectDir, "README.md") }));
  await stack.say(id, call("bash", { command: "echo before compaction", description: "Print a line" }));
  const summarized = await client.session.summarize({ path: { id }, body: { providerID: "mock", modelID: "mock-model" } });
  if (summarized.error) throw new Error(`summarize failed: ${JSON.stringify(summarized.error)}`);
  await waitUntil(
    async () => (await stack.messages(id)).some((m) => m.info.role === "assistant" && m.info.summary === true && m.info.time?.completed),
    { timeoutMs: 15_000, what: "a finished compaction summary" },
  );
  await stack.say(id, "What was the codeword?\nREPLY The codeword was PLUM-42.");
  await stack.say(id, call("bash", { command: "echo after compaction", description: "Print a line" }));
  const views = readFileSync(probeFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { sessionID: string; messages: Message[] })
    .filter((view) => view.sessionID === id);
  const modelView = views.at(-1)?.messages;
  if (!modelView) throw new Error("the probe recorded no model request for the compacted session");
  return { messages: await stack.messages(id), modelView };
}


function checkBigOutput(name: string, messages: Message[]): void {
  const big = messages
    .flatMap((m) => m.parts)
    .filter((p) => p.type === "tool" && p.state?.status === "completed" && String(p.state.output).length === BIG_OUTPUT_CHARS);
  if (big.length !== 1) throw new Error(`${name}: expected one ${BIG_OUTPUT_CHARS}-char tool output, found ${big.length}`);
}

function write(name: string, root: string, fixture: Record<string, unknown>): void {
  const text = fixtureText({ capturedWith: `opencode ${OPENCODE_VERSION} serve, scripts/capture-fork-fixtures.ts, mock model`, ...fixture }, root);
  if (text.length > MAX_FIXTURE_BYTES) throw new Error(`${name}.json would be ${text.length} bytes (limit ${MAX_FIXTURE_BYTES})`);
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(join(OUT_DIR, `${name}.json`), text);
  console.log(`wrote ${join(OUT_DIR, `${name}.json`)}: ${text.length} bytes`);
}

async function main(): Promise<void> {
  const probeDir = mkdtempSync(join(tmpdir(), "fork-fixture-probe-"));
  const probeFile = join(probeDir, "views.jsonl");
  const plugin = [
    [pathToFileURL(PACKAGE_DIR).href, {}],
    [pathToFileURL(PROBE_DIR).href, { out: probeFile }],
  ];
  const stack = await startStack({ responder, config: { plugin } });
  try {
    const root = dirname(stack.server.projectDir);
    const toolOutputs = await captureToolOutputs(stack);
    checkBigOutput("tool-outputs", toolOutputs);
    const compacted = await captureCompacted(stack, probeFile);
    checkBigOutput("compacted", compacted.messages);
    if (!existsSync(probeFile)) throw new Error("the probe plugin did not load");
    write("tool-outputs", root, {
      description: "Five turns: a text reply; bash with a 9,000-character output; a short bash and a read in one response; a read of a missing file (tool error); a text reply.",
      messages: toolOutputs,
    });
    write("compacted", root, {
      description:
        "Four turns, then session.summarize (a manual compaction), then two turns. `messages` is session.messages; `modelView` is what experimental.chat.messages.transform received for the last model request.",
      messages: compacted.messages,
      modelView: compacted.modelView,
    });
  } finally {
    await stack.stop();
    rmSync(probeDir, { recursive: true, force: true });
  }
}

await main();
