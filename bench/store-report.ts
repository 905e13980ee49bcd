import type { StoreBenchResult } from "./store.ts";

const ms = (n: number) => (n < 1 ? `${n.toFixed(3)} ms` : `${n.toFixed(1)} ms`);
const count = (n: number) => n.toLocaleString("en-US");

function ratio(json: number, sqlite: number): string {
  const x = json / sqlite;
  return `${x.toFixed(x < 1 ? 2 : x < 10 ? 1 : 0)}x`;
}

/** The benchmark as a readable table, with the goals and whether they are met. */
export function formatStoreBench(r: StoreBenchResult): string {
  const { sqlite, json } = r;
  const list = `list ${count(r.listTasks)}`;
  const settle = `${count(r.settleTasks)} stored`;
  const rows = [
    ["", "SQLite store", "JSON file store", "JSON / SQLite"],
    [`${list}, median of ${r.listRuns}`, ms(sqlite.listMedianMs), `${ms(json.listMedianMs)} (memory)`, ratio(json.listMedianMs, sqlite.listMedianMs)],
    [`${list}, first after open`, ms(sqlite.listFirstMs), `${ms(json.listFirstMs)} (read+parse)`, ratio(json.listFirstMs, sqlite.listFirstMs)],
    [`settle p50, ${settle}`, ms(sqlite.settleP50Ms), ms(json.settleP50Ms), ratio(json.settleP50Ms, sqlite.settleP50Ms)],
    [`settle p95, ${settle}`, ms(sqlite.settleP95Ms), ms(json.settleP95Ms), ratio(json.settleP95Ms, sqlite.settleP95Ms)],
  ];
  const met = (ok: boolean) => (ok ? "met" : "NOT MET");
  const settleRatios = `${ratio(json.settleP50Ms, sqlite.settleP50Ms)} at p50, ${ratio(json.settleP95Ms, sqlite.settleP95Ms)} at p95`;
  return [
    `Store benchmark: ${r.runtime}; temporary files under ${r.dir}`,
    `Tasks of ~2.2 KB (600-char prompt, 1,500-char result); the JSON file of ${count(r.listTasks)} is ${(json.fileBytes / 1e6).toFixed(1)} MB.`,
    "SQLite settle = save + appendEvent in one transaction, as the plugin settles. JSON settle = rewrite the whole file with writeFileSync.",
    "Warm SQLite lists come from the store's in-memory cache and are copies; the JSON store hands out its own objects.",
    "",
    ...alignColumns(rows),
    "",
    `Goal: list ${count(r.listTasks)} tasks under 20 ms: ${met(r.goals.listUnder20Ms)} (${ms(sqlite.listMedianMs)})`,
    `Goal: settle at least 20x faster than the JSON rewrite: ${met(r.goals.settle20xFaster)} (${settleRatios})`,
  ].join("\n");
}

/** First column left-aligned, figures right-aligned. */
function alignColumns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("   "));
}
