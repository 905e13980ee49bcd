/**
 * The open dashboard of the shared-db comparison, in its own process as in real use: serves the
 * database and plays one browser tab (listens to the live events and fetches the home page on
 * every change) until stdin closes. Usage: dashboard-viewer.ts DB_PATH
 */
import { request } from "node:http";
import { startDashboard } from "../src/dashboard/dashboard-server.ts";

const dash = await startDashboard({ dbPath: process.argv[2]!, port: 0, host: "127.0.0.1" });
const cookie = `obt_dashboard=${dash.token}`;
let refreshes = 0;
let busy = false;

const get = (path: string, onResponse: (res: import("node:http").IncomingMessage) => void) =>
  request(dash.origin + path, { headers: { cookie } }, onResponse).end();

const refresh = () => {
  if (busy) return;
  busy = true;
  get("/", (res) => {
    res.resume();
    res.on("end", () => {
      refreshes++;
      busy = false;
    });
  });
};

get("/events", (res) => {
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => {
    if (chunk.includes("event: change")) refresh();
  });
  process.stdout.write("viewing\n");
});
process.stdin.resume();
process.stdin.on("end", async () => {
  process.stdout.write(`refreshed ${refreshes}\n`);
  await dash.close();
  process.exit(0);
});
