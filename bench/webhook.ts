/**
 * Webhook listener throughput: signed deliveries accepted per second (GitHub-style and Standard
 * Webhooks; rate limit off, accept a no-op) against an unsigned route in the same server that
 * reads the body the same way and answers the same JSON. The server runs in a child process,
 * under Node and under Bun (as inside OpenCode); the client is always this Node process, with a
 * keep-alive agent: 5,000 requests of a 2 KB body, 16 at a time, median of 3 rounds.
 * Goal: > 2,000 signed deliveries a second.
 * Run alone with `npx tsx bench/webhook.ts`, or call runWebhookBench() from bench/run.ts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import { readBody, webhookHandler } from "../src/triggers/webhook-listener.ts";
import { newWebhookSecret, signGithub, signStandardWebhook } from "../src/triggers/webhook-signature.ts";
import { median } from "./stats.ts";

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const GOAL_PER_SECOND = 2_000;
const SECRET = newWebhookSecret();

type Route = "unsigned" | "github" | "standard";
export type WebhookBenchRow = { runtime: "node" | "bun"; route: Route; perSecond: number };

export async function runWebhookBench({ requests = 5_000, concurrency = 16, rounds = 3, print = true } = {}): Promise<WebhookBenchRow[]> {
  const body = samplePayload();
  const rows: WebhookBenchRow[] = [];
  for (const runtime of ["node", "bun"] as const) {
    const server = await startServerProcess(runtime);
    try {
      await measure(server.url, "unsigned", body, 500, concurrency); // warm-up (JIT, sockets)
      await measure(server.url, "github", body, 500, concurrency);
      const samples: Record<Route, number[]> = { unsigned: [], github: [], standard: [] };
      for (let round = 0; round < rounds; round++) {
        for (const route of ["unsigned", "github", "standard"] as const) samples[route].push(await measure(server.url, route, body, requests, concurrency));
      }
      for (const route of ["unsigned", "github", "standard"] as const) rows.push({ runtime, route, perSecond: median(samples[route]) });
    } finally {
      server.child.stdin?.end();
      await once(server.child, "exit");
    }
  }
  if (print) report(rows, requests, concurrency, body.length);
  return rows;
}

/** Requests per second for `count` deliveries to one route; every one must be answered 202. */
async function measure(url: string, route: Route, body: string, count: number, concurrency: number): Promise<number> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  // Signed up front, so the client's own signing is not counted against the server.
  const headers = Array.from({ length: count }, (_, i) => headersFor(route, body, `d${i}`));
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const status = await post(agent, target, route === "unsigned" ? "/plain/bench" : "/hooks/bench", headers[i]!, body);
      if (status !== 202) throw new Error(`${route} delivery ${i} answered ${status}, not 202`);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return Math.round(count / seconds);
}

function headersFor(route: Route, body: string, id: string): Record<string, string> {
  const base = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
  if (route === "github") return { ...base, "x-github-event": "push", "x-github-delivery": id, "x-hub-signature-256": signGithub(SECRET, body) };
  if (route === "unsigned") return base;
  const timestamp = Math.floor(Date.now() / 1000);
  return { ...base, "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signStandardWebhook(SECRET, id, timestamp, body) };
}

function post(agent: Agent, target: URL, path: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path, method: "POST", headers, agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Starts `serve()` below in a child process under the runtime; resolves with its URL. */
async function startServerProcess(runtime: "node" | "bun"): Promise<{ url: string; child: ChildProcess }> {
  const [cmd, args] = runtime === "node" ? ["node", ["--import", "tsx", SELF, "--serve"]] : ["npx", ["bun", SELF, "--serve"]];
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, WEBHOOK_BENCH_SECRET: SECRET } });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk) => (output += chunk));
  while (!/http:\/\/\S+/.test(output)) {
    const [event] = await Promise.race([once(child.stdout!, "data").then(() => ["data"]), once(child, "exit").then(() => ["exit"])]);
    if (event === "exit") throw new Error(`the ${runtime} webhook server did not start: ${output}`);
  }
  return { url: /http:\/\/\S+/.exec(output)![0], child };
}

/** The server side: the listener's handler on /hooks/bench, and an unsigned twin on /plain/bench. */
async function serve(secret: string): Promise<void> {
  let runs = 0;
  const hooks = webhookHandler({ lookup: () => ({ secret }), accept: () => ({ status: 202, runId: ++runs }), ratePerMinute: 0 });
  const plain = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req, 1_048_576);
    if (typeof body === "string") return void res.writeHead(413).end();
    void body.toString("utf8");
    const text = JSON.stringify({ accepted: true, run: ++runs });
    res.writeHead(202, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) }).end(text);
  };
  const server = createServer((req, res) => (req.url?.startsWith("/plain/") ? void plain(req, res) : hooks(req, res)));
  server.keepAliveTimeout = 2_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  process.stdin.on("end", () => process.exit(0)).resume();
}

/** About 2 KB, shaped like a GitHub push event. */
function samplePayload(): string {
  const commit = (i: number) => ({ id: `${i}`.padStart(40, "a"), message: `Fix the thing number ${i}`, author: { name: "Ada", email: "ada@example.com" }, modified: ["src/a.ts", "src/b.ts"] });
  return JSON.stringify({ ref: "refs/heads/main", before: "0".repeat(40), after: "f".repeat(40), repository: { full_name: "owner/repo", private: false }, pusher: { name: "ada" }, commits: Array.from({ length: 11 }, (_, i) => commit(i)) });
}

function report(rows: WebhookBenchRow[], requests: number, concurrency: number, bytes: number): void {
  console.log(`Webhook deliveries accepted per second (${requests} requests of ${bytes} B, ${concurrency} at a time, keep-alive, median of rounds):`);
  for (const runtime of ["node", "bun"] as const) {
    const of = (route: Route) => rows.find((r) => r.runtime === runtime && r.route === route)!.perSecond;
    const unsigned = of("unsigned");
    console.log(`  server under ${runtime}: unsigned route ${unsigned}/s (baseline)`);
    for (const route of ["github", "standard"] as const) {
      const value = of(route);
      const verdict = value > GOAL_PER_SECOND ? "meets" : "MISSES";
      console.log(`    ${route.padEnd(8)} signed ${value}/s = ${(value / unsigned).toFixed(2)}x the unsigned route (${verdict} the goal > ${GOAL_PER_SECOND}/s)`);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv.includes("--serve")) await serve(process.env.WEBHOOK_BENCH_SECRET ?? "");
  else await runWebhookBench();
}
