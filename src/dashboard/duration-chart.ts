import type { Run } from "../automations/automation.ts";
import { formatDuration } from "../core/format-duration.ts";
import { html, type SafeHtml } from "./html.ts";

const WIDTH = 640;
const HEIGHT = 160;
const PAD = { left: 44, bottom: 18, top: 10 };
const COLORS: Record<string, string> = { completed: "#2a2", error: "#d33", cancelled: "#999", running: "#2a6fdb", starting: "#2a6fdb" };

/**
 * Inline SVG of run durations over time (oldest left), one bar per run coloured by outcome;
 * skipped and missed firings are small grey ticks on the axis. Built from numbers only; the
 * tooltip text goes through html`` like everything else.
 */
export function durationChart(runs: Run[], now: number): SafeHtml {
  const shown = [...runs].reverse();
  if (shown.length === 0) return html`<p class="none">No runs to chart yet.</p>`;
  const took = (r: Run) => (r.startedAt === undefined ? 0 : (r.endedAt ?? now) - r.startedAt);
  const max = Math.max(1000, ...shown.map(took));
  const plotW = WIDTH - PAD.left;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = plotW / shown.length;
  const barW = Math.max(2, Math.min(24, step * 0.7));
  const bars = shown.map((r, i) => {
    const x = (PAD.left + i * step + (step - barW) / 2).toFixed(1);
    const label = `run ${r.runNo ?? "-"}: ${r.status}${r.startedAt !== undefined ? `, ${formatDuration(took(r))}` : ""}`;
    if (r.status === "skipped" || r.status === "missed" || r.status === "waiting") {
      return html`<rect class="bar" data-status="${r.status}" x="${x}" y="${HEIGHT - PAD.bottom - 3}" width="${barW.toFixed(1)}" height="3" fill="#bbb"><title>${label}</title></rect>`;
    }
    const h = Math.max(2, (took(r) / max) * plotH);
    const fill = COLORS[r.status] ?? "#999";
    return html`<rect class="bar" data-status="${r.status}" x="${x}" y="${(HEIGHT - PAD.bottom - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${fill}"><title>${label}</title></rect>`;
  });
  const axisY = HEIGHT - PAD.bottom;
  return html`<svg class="chart" id="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="Run durations and outcomes, oldest left">
<line x1="${PAD.left}" y1="${axisY}" x2="${WIDTH}" y2="${axisY}" stroke="#8888"/><line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${axisY}" stroke="#8888"/>
<text x="${PAD.left - 4}" y="${PAD.top + 8}" text-anchor="end">${formatDuration(max)}</text><text x="${PAD.left - 4}" y="${axisY}" text-anchor="end">0</text>
<text x="${PAD.left}" y="${HEIGHT - 4}">oldest</text><text x="${WIDTH}" y="${HEIGHT - 4}" text-anchor="end">newest</text>
${bars}</svg>
<p class="small">Bars: <span class="s-completed">completed</span>, <span class="s-error">error</span>, <span class="s-cancelled">cancelled</span>, <span class="s-running">running</span>; grey ticks: skipped or missed.</p>`;
}
