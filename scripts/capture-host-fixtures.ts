/**
 * Captures what a plugin hears from a real `opencode serve` (driven by the integration harness's
 * scripted mock model) and stores it as test/fixtures/host/events.json for the host conformance
 * unit test (test/unit/host-conformance.test.ts):
 *
 * - `scenarios`: for each run (a text reply, a tool call, a model error, a retry, an abort, a
 *   permission asked and answered, a deleted session) its session id and every event the plugin's
 *   `event` hook received, in order, recorded by scripts/host-fixtures/event-probe;
 * - `answers`: the raw answers (`data`, `error`, HTTP status) of the client calls the host adapter
 *   makes, so a fake client can replay them.
 *
 * The mock's answers are fixed, so only ids and times change between captures; the run's temp root
 * is replaced by FIXTURE_ROOT (scripts/fixture-text.ts). Run: npx tsx scripts/capture-host-fixtures.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fixtureText } from "./fixture-text.ts";
import { startStack, call, waitUntil, MOCK_MODEL, PACKAGE_DIR, type Stack } from "../test/harness/plugin-stack.ts";

const OUT_FILE = fileURLToPath(new URL("../test/fixtures/host/events.json", import.meta.url));
const PROBE_DIR = fileURLToPath(new URL("./host-fixtures/event-probe", import.meta.url));
const OPENCODE_VERSION = (JSON.parse(readFileSync(join(PACKAGE_DIR, "node_modules/opencode-ai/package.json"), "utf8")) as { version: string }).version;
const MAX_FIXTURE_BYTES = 150_000;

type RawEvent = { type: string; properties: Record<string, any> };
type Answer = { data?: unknown; error?: unknown; status?: number };

/** The session an event is about, wherever its shape keeps the id. */
export function sessionOf(event: RawEvent): string | undefined {
  const p = event.properties ?? {};
  return p.sessionID ?? p.info?.sessionID ?? p.part?.sessionID ?? (event.type.startsWith("session.") ? p.info?.id : undefined);
}

function answer(result: { data?: unknown; error?: unknown; response?: Response }): Answer {
  return { data: result.data, error: result.error, status: result.response?.status };
}

async function prompt(stack: Stack, sessionID: string, text: string): Promise<void> {
  const sent = await stack.server.client.session.promptAsync({
    path: { id: sessionID },
    body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text }] },
  });
  if (sent.error) throw new Error(`promptAsync failed: ${JSON.stringify(sent.error)}`);
}

/** Waits until the probe has recorded `count` session.idle events for a session. */
async function idles(events: () => RawEvent[], sessionID: string, count: number): Promise<void> {
  await waitUntil(() => events().filter((e) => e.type === "session.idle" && sessionOf(e) === sessionID).length >= count, {
    timeoutMs: 20_000,
    what: `${count} idle event(s) of ${sessionID}`,
  });
}

async function capture(stack: Stack, events: () => RawEvent[]) {
  const client = stack.server.client;
  const sessions: Record<string, string> = {};
  const answers: Record<string, Answer> = {};
  const seen = (type: string, sessionID: string) => () => events().find((e) => e.type === type && sessionOf(e) === sessionID);

  sessions.reply = await stack.newSession("host fixture: reply");
  await prompt(stack, sessions.reply, "Hello.\nREPLY Hello from the mock.");
  await idles(events, sessions.reply, 1);

  sessions.tool = await stack.newSession("host fixture: tool");
  await prompt(stack, sessions.tool, call("read", { filePath: join(stack.server.projectDir, "README.md") }));
  await idles(events, sessions.tool, 1);

  sessions.error = await stack.newSession("host fixture: error");
  await prompt(stack, sessions.error, "FAIL 400 the model refused");
  await idles(events, sessions.error, 2); // a run that ends in an error has two idle pairs

  sessions.retry = await stack.newSession("host fixture: retry");
  await prompt(stack, sessions.retry, "FAIL 500 boom");
  await waitUntil(() => events().find((e) => e.type === "session.status" && sessionOf(e) === sessions.retry && e.properties.status?.type === "retry"), { what: "a retry status" });
  await client.session.abort({ path: { id: sessions.retry } });
  await idles(events, sessions.retry, 1);

  sessions.abort = await stack.newSession("host fixture: abort");
  await prompt(stack, sessions.abort, "SLOW 10000\nREPLY never");
  await waitUntil(() => stack.mock.inFlight().current > 0, { what: "the slow model call in flight" });
  answers.statusWhileBusy = answer(await client.session.status());
  answers.abort = answer(await client.session.abort({ path: { id: sessions.abort } }));
  await idles(events, sessions.abort, 2);

  sessions.permission = await stack.newSession("host fixture: permission");
  await prompt(stack, sessions.permission, call("bash", { command: "echo guarded", description: "guarded echo" }));
  const asked = await waitUntil(seen("permission.asked", sessions.permission), { timeoutMs: 20_000, what: "permission.asked" });
  const reply = { path: { id: sessions.permission, permissionID: String(asked.properties.id) }, body: { response: "once" as const } };
  answers.permissionReply = answer(await client.postSessionIdPermissionsPermissionId(reply));
  await idles(events, sessions.permission, 1);

  sessions.deleted = await stack.newSession("host fixture: deleted");
  answers.deleteSession = answer(await client.session.delete({ path: { id: sessions.deleted } }));
  await waitUntil(seen("session.deleted", sessions.deleted), { what: "session.deleted" });

  answers.createSession = answer(await client.session.create({ body: { parentID: sessions.reply, title: "host fixture: child" } }));
  answers.listSessions = answer(await client.session.list());
  answers.getSession = answer(await client.session.get({ path: { id: sessions.reply } }));
  answers.getDeletedSession = answer(await client.session.get({ path: { id: sessions.deleted } }));
  answers.statusIdle = answer(await client.session.status());
  answers.messagesReply = answer(await client.session.messages({ path: { id: sessions.reply }, query: { limit: 2 } }));
  answers.messagesTool = answer(await client.session.messages({ path: { id: sessions.tool }, query: { limit: 3 } }));
  answers.messagesError = answer(await client.session.messages({ path: { id: sessions.error }, query: { limit: 2 } }));
  answers.agents = answer(await client.app.agents());
  answers.promptAsync = answer(await client.session.promptAsync({ path: { id: sessions.reply }, body: { agent: "build", model: MOCK_MODEL, noReply: true, parts: [{ type: "text", text: "stored only" }] } }));
  answers.promptDeleted = answer(await client.session.promptAsync({ path: { id: sessions.deleted }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: "to nobody" }] } }));

  const scenarios = Object.fromEntries(
    Object.entries(sessions).map(([name, sessionID]) => [name, { sessionID, events: events().filter((e) => sessionOf(e) === sessionID) }]),
  );
  return { scenarios, answers };
}


async function main(): Promise<void> {
  const probeDir = mkdtempSync(join(tmpdir(), "host-fixture-probe-"));
  const probeFile = join(probeDir, "events.jsonl");
  const events = (): RawEvent[] => {
    const text = (() => {
      try {
        return readFileSync(probeFile, "utf8");
      } catch {
        return "";
      }
    })();
    return text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as RawEvent);
  };
  // Only the probe: the events are the host's, not shaped by this plugin's own calls.
  const plugin = [[pathToFileURL(PROBE_DIR).href, { out: probeFile }]];
  const stack = await startStack({ config: { plugin, permission: { bash: "ask" } } });
  try {
    const fixture = await capture(stack, events);
    const text = fixtureText({ capturedWith: `opencode ${OPENCODE_VERSION} serve, scripts/capture-host-fixtures.ts, mock model`, ...fixture }, dirname(stack.server.projectDir));
    if (text.length > MAX_FIXTURE_BYTES) throw new Error(`events.json would be ${text.length} bytes (limit ${MAX_FIXTURE_BYTES})`);
    mkdirSync(dirname(OUT_FILE), { recursive: true });
    writeFileSync(OUT_FILE, text);
    console.log(`wrote ${OUT_FILE}: ${text.length} bytes`);
  } finally {
    await stack.stop();
    rmSync(probeDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
