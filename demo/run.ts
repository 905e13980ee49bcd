/**
 * `npm run demo`: the plugin end to end on the real host, offline. Starts the scripted mock model
 * and a real `opencode serve` with this package as a plugin, runs a parent conversation that
 * launches two background tasks and later resumes one, and prints what happens as a timeline.
 */
import { startStack, type Stack } from "../test/harness/plugin-stack.ts";
import { Conversation } from "./conversation.ts";
import { reportFailure } from "./failure.ts";
import { Narrator } from "./narrator.ts";
import { PluginDatabase } from "./plugin-database.ts";
import { demoResponder } from "./scenario.ts";
import { printSummary } from "./summary.ts";
import { bold, dim, Timeline } from "./timeline.ts";

const timeline = new Timeline();

const INTRO = [
  "A real `opencode serve` with this plugin loaded, talking to a scripted mock model: no API key, no network.",
  "The parent and its child sessions share the mock, which follows directives in the prompts:",
  "CALL <tool> <json> calls a tool, SLOW <ms> delays each answer, and after tool calls it answers DONE + their output.",
  "",
];

// The harness exits on these signals and kills the server on exit; this runs first, to say so.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.prependOnceListener(signal, () => console.error(`\n${signal}: stopping the server and removing its temp home.`));
}

process.exit(await main());

async function main(): Promise<number> {
  timeline.plain(bold("opencode-background-tasks demo"));
  for (const line of INTRO) timeline.plain(dim(line));
  let stack: Stack | undefined;
  let db: PluginDatabase | undefined;
  let narrator: Narrator | undefined;
  try {
    timeline.step("starting the mock model and opencode serve...");
    stack = await startStack({ responder: demoResponder });
    timeline.step(`${bold("server up")} at ${stack.server.url} (pid ${stack.server.pid}, listening after ${(stack.server.startMs / 1000).toFixed(1)}s)`);
    db = PluginDatabase.inHome(stack.server.homeDir);
    const parentID = await stack.newSession("demo parent");
    timeline.step(`parent session ${parentID} created`);
    narrator = new Narrator(stack.events, timeline, db, parentID);
    narrator.start();
    await converse(new Conversation(stack, timeline, narrator, parentID));
    printSummary(db, parentID, (id) => narrator!.labelOf(id));
    return 0;
  } catch (error) {
    await narrator?.flush().catch(() => undefined);
    reportFailure(error, stack);
    return 1;
  } finally {
    narrator?.stop();
    db?.close();
    await stack?.stop();
    timeline.plain();
    timeline.step(`server stopped; demo took ${(timeline.elapsedMs() / 1000).toFixed(1)}s`);
  }
}

async function converse(conversation: Conversation): Promise<void> {
  const ids = await conversation.launchTwoTasks();
  await conversation.waitForNotifications(ids);
  await conversation.readOutput(ids[0]);
  await conversation.resume(ids[0]);
  await conversation.waitForNotifications([ids[0]], 2);
}
