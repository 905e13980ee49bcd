/**
 * `npm run demo`: the plugin end to end on the real host, offline. Starts the scripted mock model
 * and a real `opencode serve` with this package as a plugin (its dashboard on), runs a parent
 * conversation that launches two background tasks, resumes one and creates an automation that
 * reports back twice, and prints what happens as a timeline.
 * `npm run demo -- --keep` leaves the server and the dashboard up until Ctrl-C.
 */
import { startStack, type Stack } from "../test/harness/plugin-stack.ts";
import { Conversation } from "./conversation.ts";
import { dashboardUrl, freePort } from "./dashboard.ts";
import { reportFailure } from "./failure.ts";
import { Narrator } from "./narrator.ts";
import { PluginDatabase } from "./plugin-database.ts";
import { demoResponder } from "./scenario.ts";
import { printSummary } from "./summary.ts";
import { bold, dim, Timeline } from "./timeline.ts";

const timeline = new Timeline();
const keep = process.argv.includes("--keep");

const INTRO = [
  "A real `opencode serve` with this plugin loaded, talking to a scripted mock model: no API key, no network.",
  "The parent and its child sessions share the mock, which follows directives in the prompts:",
  "CALL <tool> <json> calls a tool, SLOW <ms> delays each answer, and after tool calls it answers DONE + their output.",
  "",
];

// The harness exits on these signals and kills the server on exit; this runs first, to say so.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.prependOnceListener(signal, () => console.error(`\n${signal}: stopping the server and its dashboard, removing its temp home.`));
}

process.exit(await main());

async function main(): Promise<number> {
  timeline.plain(bold("opencode-errands demo"));
  for (const line of INTRO) timeline.plain(dim(line));
  let stack: Stack | undefined;
  let db: PluginDatabase | undefined;
  let narrator: Narrator | undefined;
  try {
    timeline.step("starting the mock model and opencode serve...");
    const port = await freePort();
    stack = await startStack({ responder: demoResponder, pluginOptions: { dashboardPort: port } });
    timeline.step(`${bold("server up")} at ${stack.server.url} (pid ${stack.server.pid}, listening after ${(stack.server.startMs / 1000).toFixed(1)}s)`);
    const dashboard = await dashboardUrl(stack, port);
    timeline.step(`${bold("dashboard")} (plugin option dashboardPort: ${port}): ${dashboard}`);
    timeline.detail("open it while the demo runs (the URL carries its access token); `npm run demo -- --keep` leaves it up afterwards");
    db = PluginDatabase.inHome(stack.server.homeDir);
    const parentID = await stack.newSession("demo parent");
    timeline.step(`parent session ${parentID} created`);
    narrator = new Narrator(stack.events, timeline, db, parentID);
    narrator.start();
    await converse(new Conversation(stack, timeline, narrator, parentID));
    printSummary(db, parentID, (id) => narrator!.labelOf(id));
    if (keep) await stayUp(stack, dashboard);
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
  await conversation.createAutomation();
  await conversation.waitForAutomationReports(2);
}

/** --keep: the page stays populated for a new user to click around; the signal handlers end the process. */
function stayUp(stack: Stack, dashboard: string): Promise<never> {
  timeline.plain();
  timeline.step(`demo done in ${(timeline.elapsedMs() / 1000).toFixed(1)}s; ${bold("--keep")}: the server and the dashboard stay up`);
  timeline.detail(`dashboard:       ${dashboard}`);
  timeline.detail(`opencode server: ${stack.server.url}`);
  timeline.detail("Press Ctrl-C to stop both and remove the demo's temp home.");
  return new Promise<never>(() => setInterval(() => undefined, 1 << 30));
}
