import { formatTime } from "../core/format-time.ts";
import { formatDuration } from "../core/format-duration.ts";
import { html, type SafeHtml } from "./html.ts";
import type { ProjectRef } from "../store/reads/read-model.ts";

export type PageFrame = {
  title: string;
  /** Items needing attention: shown as "(n)" in the title. */
  attention?: number;
  /** Proposals waiting for a decision (counted in `attention` too): "n proposals" in the title. */
  proposals?: number;
  projects: ProjectRef[];
  project?: string;
  /** Where the project selector sends the user (the current path). */
  path: string;
  /** False when the page marks its own live parts (data-live) so that e.g. a filter form is not replaced. */
  liveMain?: boolean;
};

/** The whole document. Scripts and styles come from the server itself (CSP 'self'); no CDN. */
export function layout(frame: PageFrame, body: SafeHtml): SafeHtml {
  const proposals = frame.proposals ? `${frame.proposals} proposal${frame.proposals === 1 ? "" : "s"} · ` : "";
  const title = `${frame.attention ? `(${frame.attention}) ` : ""}${proposals}${frame.title} · background tasks`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="stylesheet" href="/app.css"><script src="/app.js" defer></script></head>
<body><header><a class="home" href="/${frame.project ? html`?project=${encodeURIComponent(frame.project)}` : ""}">Background tasks</a>
${projectSelector(frame)}<span class="live" id="live" title="live updates">●</span></header>
<main id="main"${frame.liveMain === false ? "" : html` data-live`}>${body}</main></body></html>`;
}

function projectSelector(frame: PageFrame): SafeHtml {
  const option = (value: string, label: string, title = label) =>
    html`<option value="${value}" title="${title}"${value === (frame.project ?? "") ? html` selected` : ""}>${label}</option>`;
  return html`<form class="projects" method="get" action="/"><label>Project <select name="project" data-autosubmit>
${option("", "all projects")}${frame.projects.map((p) => option(p.id, folderName(p), p.directory ?? p.id))}</select></label><noscript><button>Show</button></noscript></form>`;
}

/** A project by its folder's name, the full path (or the id) on hover; the id when its directory is unknown. */
export function projectName(projects: ProjectRef[], id: string): SafeHtml {
  const project = projects.find((p) => p.id === id) ?? { id };
  return html`<span class="project" title="${project.directory ?? id}">${folderName(project)}</span>`;
}

function folderName(project: ProjectRef): string {
  return project.directory?.split(/[\\/]/).filter(Boolean).pop() ?? project.directory ?? project.id;
}

/** A time the browser rewrites in the user's own time zone (app.js); the server's local time without JS. */
export function time(ms: number | undefined): SafeHtml {
  if (ms === undefined) return html`<span class="none">-</span>`;
  return html`<time datetime="${new Date(ms).toISOString()}" data-ts="${ms}">${formatTime(ms)}</time>`;
}

export function status(value: string): SafeHtml {
  return html`<span class="status s-${value}">${value}</span>`;
}

export function duration(from: number | undefined, to: number | undefined): string {
  return from === undefined || to === undefined ? "-" : formatDuration(to - from);
}

/** Time since `since`, kept ticking by app.js between live updates. */
export function elapsed(since: number, now: number): SafeHtml {
  return html`<span data-since="${since}">${duration(since, now)}</span>`;
}

export function taskHref(projectId: string, id: string): string {
  return `/task?project=${encodeURIComponent(projectId)}&id=${encodeURIComponent(id)}`;
}

export function automationHref(projectId: string, id: string): string {
  return `/automation?project=${encodeURIComponent(projectId)}&id=${encodeURIComponent(id)}`;
}

/** One-line preview of untrusted text, cut at `max` characters. */
export function preview(text: string | undefined, max = 120): string {
  if (!text) return "";
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
