import type { DayCost } from "../cost/cost-report.ts";
import { formatSpend, formatTokens, formatUsd } from "../cost/format-spend.ts";
import { addSpend, countedTokens, NO_SPEND, type Spend } from "../cost/spend.ts";
import { html, type SafeHtml } from "./html.ts";

export const CHART_DAYS = 30;
const WIDTH = 640;
const HEIGHT = 160;
const PAD = { left: 52, bottom: 18, top: 10 };
const COLORS = ["#2a6fdb", "#e08a1e", "#2a2", "#b04fc9", "#d33", "#17a2b8", "#8a6d3b"];
const OTHER_COLOR = "#999";

type Group = { label: string; total: Spend; color: string };

/**
 * Inline SVG of what background work cost per day over the last 30 days (oldest left), one stacked
 * bar per day, a colour per automation or model (the 7 that cost most, the rest as "others").
 * Dollars, or tokens when nothing had a price. Built from numbers; labels go through html``.
 */
export function spendChart(cells: DayCost[], days: string[], id: string, what: string): SafeHtml {
  if (cells.length === 0) return html`<p class="none">Nothing spent in the last ${CHART_DAYS} days.</p>`;
  const inUsd = cells.some((c) => c.spend.costUsd > 0);
  const value = (s: Spend) => (inUsd ? s.costUsd : countedTokens(s));
  const groups = groupColors(cells, value);
  const perDay = days.map((day) => cells.filter((c) => c.day === day));
  const max = Math.max(...perDay.map((list) => list.reduce((sum, c) => sum + value(c.spend), 0)), inUsd ? 0.001 : 1);
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = (WIDTH - PAD.left) / days.length;
  const barW = Math.max(2, step * 0.7);
  const bars = perDay.flatMap((list, i) => {
    let y = HEIGHT - PAD.bottom;
    const x = (PAD.left + i * step + (step - barW) / 2).toFixed(1);
    return list.map((c) => {
      const h = (value(c.spend) / max) * plotH;
      y -= h;
      const group = groups.get(c.label)!;
      return html`<rect class="spend-bar" data-day="${c.day}" x="${x}" y="${y.toFixed(1)}" width="${barW.toFixed(1)}" height="${Math.max(h, 0.5).toFixed(1)}" fill="${group.color}"><title>${c.day} ${c.label}: ${formatSpend(c.spend)}</title></rect>`;
    });
  });
  const axisY = HEIGHT - PAD.bottom;
  const top = inUsd ? formatUsd(max) : `${formatTokens(max)} tok`;
  return html`<svg class="chart" id="${id}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="Spend per day by ${what}, the last ${CHART_DAYS} days, oldest left">
<line x1="${PAD.left}" y1="${axisY}" x2="${WIDTH}" y2="${axisY}" stroke="#8888"/><line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${axisY}" stroke="#8888"/>
<text x="${PAD.left - 4}" y="${PAD.top + 8}" text-anchor="end">${top}</text><text x="${PAD.left - 4}" y="${axisY}" text-anchor="end">0</text>
<text x="${PAD.left}" y="${HEIGHT - 4}">${days[0]}</text><text x="${WIDTH}" y="${HEIGHT - 4}" text-anchor="end">${days.at(-1)}</text>
${bars}</svg>
<ul class="legend small">${[...uniqueGroups(groups)].map((g) => html`<li><svg class="swatch" width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${g.color}"/></svg> ${g.label}: ${formatSpend(g.total)}</li>`)}</ul>`;
}

/** The local days of the chart, oldest first, ending today: `YYYY-MM-DD`. */
export function chartDays(now: number): string[] {
  const today = new Date(now);
  return Array.from({ length: CHART_DAYS }, (_, i) => {
    const d = new Date(today.getFullYear(), today.getMonth(), today.getDate() - (CHART_DAYS - 1 - i));
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
  });
}

/** The start (local midnight) of the chart's first day. */
export function chartSince(now: number): number {
  const today = new Date(now);
  return new Date(today.getFullYear(), today.getMonth(), today.getDate() - (CHART_DAYS - 1)).getTime();
}

/** A colour per label, the costliest first; past the palette, labels share "others" (its total summed). */
function groupColors(cells: DayCost[], value: (s: Spend) => number): Map<string, Group> {
  const totals = new Map<string, Spend>();
  for (const c of cells) totals.set(c.label, addSpend(totals.get(c.label) ?? NO_SPEND, c.spend));
  const ranked = [...totals].sort((a, b) => value(b[1]) - value(a[1]) || a[0].localeCompare(b[0]));
  const other: Group = { label: "others", total: NO_SPEND, color: OTHER_COLOR };
  const groups = new Map<string, Group>();
  ranked.forEach(([label, total], i) => {
    if (i < COLORS.length) return void groups.set(label, { label, total, color: COLORS[i]! });
    other.total = addSpend(other.total, total);
    groups.set(label, other);
  });
  return groups;
}

function uniqueGroups(groups: Map<string, Group>): Set<Group> {
  return new Set(groups.values());
}
