import type { PageResult } from "./dashboard-routes.ts";
import { html } from "./html.ts";
import { layout } from "./page-layout.ts";

const INSTALL_LINE = `{ "plugin": ["opencode-errands"] }`;

/**
 * Every page while there is no database yet: what will be here, and how to get there. Its main
 * part is live, so the home page replaces it as soon as the plugin has created the database.
 */
export function waitingPage(dbPath: string, problem: string | undefined, url: URL): PageResult {
  const state = problem ? html`is there but cannot be read: ${problem}` : "does not exist yet.";
  const body = html`<h1>No background tasks yet</h1>
<p id="waiting">This page will show the background tasks and automations of every project on this machine:
what is running now (with a Cancel button), what needs attention, each automation with its next run and its history,
and each task with its result and evidence. It reads the database the plugin writes, <code>${dbPath}</code>, which ${state}</p>
<h2>To get there</h2>
<ol>
<li>Add the plugin to <code>opencode.json</code> (the project's, or <code>~/.config/opencode/opencode.json</code> for every project):
<pre class="text">${INSTALL_LINE}</pre></li>
<li>Start OpenCode: the plugin creates the database. Then ask the agent for a background task
("run the test suite in the background and tell me what fails") or an automation ("every weekday at 9, check for outdated dependencies").</li>
</ol>
<p>This page fills in by itself when the database appears: no need to restart the dashboard.
If you set the plugin's <code>dbPath</code> option, start the dashboard with <code>--db</code> and that path instead.</p>`;
  const status = url.pathname === "/" ? 200 : 404;
  return { status, body: layout({ title: "No background tasks yet", projects: [], path: url.pathname + url.search }, body).value };
}
