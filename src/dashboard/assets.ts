/** The page's only script and stylesheet, served by the dashboard itself (no CDN, CSP 'self'). */

/**
 * Live updates: the server sends a `change` event when the database changed (data_version);
 * the script then fetches the same URL and swaps the live parts, keeping scroll and forms.
 * Times are rewritten in the browser's own time zone.
 */
export const APP_JS = `"use strict";
(() => {
  const localTimes = (root) => {
    for (const t of root.querySelectorAll("time[data-ts]")) t.textContent = new Date(Number(t.dataset.ts)).toLocaleString();
  };
  const wire = (root) => {
    for (const s of root.querySelectorAll("select[data-autosubmit]")) s.addEventListener("change", () => s.form.submit());
    for (const form of root.querySelectorAll("form.control")) form.addEventListener("submit", (e) => send(e, form));
  };
  // Controls post with fetch: a live refresh may replace the form while it is being submitted.
  const send = async (e, form) => {
    e.preventDefault();
    const button = form.querySelector("button");
    if (button.dataset.confirm && !confirm(button.dataset.confirm)) return;
    button.disabled = true;
    const res = await fetch(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin", redirect: "manual" });
    if (res.type !== "opaqueredirect" && !res.ok) alert(await res.text());
    if (form.elements.back.value === "/" && location.pathname !== "/") location.assign("/");
    else refresh();
  };
  const duration = (ms) => {
    const s = Math.floor(Math.max(0, ms) / 1000);
    if (s < 60) return s + "s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + "m " + String(s % 60).padStart(2, "0") + "s";
    return Math.floor(m / 60) + "h " + String(m % 60).padStart(2, "0") + "m";
  };
  const tick = () => {
    for (const el of document.querySelectorAll("[data-since]")) el.textContent = duration(Date.now() - Number(el.dataset.since));
    for (const el of document.querySelectorAll("[data-unclaimed-at]")) {
      if (Date.now() >= Number(el.dataset.unclaimedAt)) el.textContent = el.dataset.unclaimedText;
    }
  };
  // A proposal that changed since the page showed it keeps the version the user saw, marked: a
  // refresh never swaps what Approve approves under the cursor (the plugin refuses that version).
  const keepSeen = (fresh) => {
    for (const card of fresh.querySelectorAll("[data-proposal][data-version]")) {
      const seen = document.querySelector('[data-proposal="' + CSS.escape(card.dataset.proposal) + '"][data-version]');
      if (!seen || seen.dataset.version === card.dataset.version) continue;
      const kept = seen.cloneNode(true);
      kept.classList.add("changed");
      if (!kept.querySelector(".changed-note")) {
        const note = document.createElement("p");
        note.className = "changed-note";
        note.textContent = "Changed since you looked: this is the version you saw, and approving it will be refused. Reload the page to see what it is now.";
        kept.prepend(note);
      }
      card.replaceWith(kept);
    }
  };
  // A tool call the user opened stays open while the page follows a running task.
  const keepOpen = (old, fresh) => {
    for (const d of old.querySelectorAll("details[data-key][open]")) {
      const same = fresh.querySelector('details[data-key="' + CSS.escape(d.dataset.key) + '"]');
      if (same) same.open = true;
    }
  };
  let busy = false;
  let again = false;
  // At most one refresh per MIN_GAP_MS: a burst of commits (a busy child) costs a few page reads, not one each.
  const MIN_GAP_MS = 250;
  let lastAt = 0;
  let latest = "";
  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    const wait = lastAt + MIN_GAP_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    lastAt = Date.now();
    try {
      const res = await fetch(location.href, { credentials: "same-origin", headers: { "x-dashboard-refresh": "1" } });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const outermost = [...doc.querySelectorAll("[data-live]")].filter((el) => !el.parentElement.closest("[data-live]"));
      for (const fresh of outermost) {
        const old = document.getElementById(fresh.id);
        if (!old) continue;
        keepSeen(fresh);
        keepOpen(old, fresh);
        old.replaceWith(fresh);
        localTimes(fresh);
        wire(fresh);
      }
      document.title = doc.title;
      document.body.dataset.version = latest;
      document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  };
  document.addEventListener("DOMContentLoaded", () => {
    localTimes(document);
    wire(document);
    setInterval(tick, 1000);
    const live = document.getElementById("live");
    const events = new EventSource("/events");
    events.addEventListener("open", () => live && live.classList.add("on"));
    events.addEventListener("error", () => live && live.classList.remove("on"));
    events.addEventListener("change", (e) => { latest = e.data; refresh(); });
  });
})();
`;

export const APP_CSS = `
:root { color-scheme: light dark; --muted: #888; --line: #8884; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; }
header { display: flex; gap: 1.5em; align-items: center; padding: .6em 1.2em; border-bottom: 1px solid var(--line); }
header .home { font-weight: 600; text-decoration: none; color: inherit; }
.live { margin-left: auto; color: var(--muted); }
.live.on { color: #2a2; }
main { padding: 0 1.2em 2em; max-width: 80em; }
h1 { font-size: 1.3em; } h2 { font-size: 1.05em; margin-top: 1.6em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 500; color: var(--muted); }
.id, .small { font: 12px ui-monospace, monospace; color: var(--muted); }
.none { color: var(--muted); }
.status { font-weight: 600; }
.s-running, .s-resumed, .s-starting, .s-claimed { color: #2a6fdb; }
.s-queued, .s-waiting, .s-pending, .s-proposed { color: #b88a00; }
.s-completed, .s-done, .s-enabled, .s-passed, .s-healthy { color: #2a2; }
.s-error, .s-failed, .s-timed_out, .s-unreachable, .s-unauthorized, .s-misconfigured { color: #d33; }
.s-cancelled, .s-skipped, .s-missed, .s-paused, .s-not_run, .s-unknown { color: var(--muted); }
ul.steps { list-style: none; padding: 0; margin: .3em 0 0; font-size: 12px; }
ul.steps pre { margin: .2em 0 .4em; max-height: 12em; overflow: auto; white-space: pre-wrap; word-break: break-word; background: #8881; padding: .3em; }
pre.text { white-space: pre-wrap; word-break: break-word; background: #8881; padding: .6em; border-radius: 4px; max-height: 30em; overflow: auto; }
pre.error { border-left: 3px solid #d33; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; }
dt { color: var(--muted); } dd { margin: 0; }
form.control { display: inline; } form.control button { margin-right: .3em; }
ul.attention { padding-left: 1.2em; } .tag { font-size: 12px; padding: 0 .4em; border-radius: 3px; background: #d332; }
article.proposal { border: 1px solid var(--line); border-left: 3px solid #b88a00; border-radius: 4px; padding: 0 .8em; margin: .6em 0; }
article.proposal h3 { font-size: 1em; } article.proposal pre.text { margin: 0; }
.exact { white-space: pre-wrap; overflow-wrap: anywhere; font: 12px/1.5 ui-monospace, monospace; background: #8881; padding: .1em .3em; border-radius: 3px; }
pre.exact { display: block; margin: 0; padding: .6em; max-height: 30em; overflow: auto; }
dl.definition dd code.exact { display: block; margin: .15em 0; }
.exact .ws { white-space: break-spaces; background: #e8a00033; outline: 1px dotted #b88a00; }
.exact .ctl { color: #d33; font-weight: 600; outline: 1px solid #d33; }
.proposal.changed { border-left-color: #d33; } .changed-note { color: #d33; font-weight: 600; }
form.filters { display: flex; gap: 1em; align-items: end; flex-wrap: wrap; }
svg.chart { max-width: 100%; height: auto; } svg.chart text { font: 10px system-ui; fill: var(--muted); }
${Array.from({ length: 7 }, (_, i) => `ul.task-tree li[data-depth="${i + 2}"] { margin-left: ${(i + 1) * 1.5}em; }`).join(" ")}
td.spend, span.spend { white-space: nowrap; font-variant-numeric: tabular-nums; }
ul.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3em 1.2em; } h3 { font-size: .95em; margin-bottom: .2em; }
.note { color: var(--muted); font-size: 12px; }
details.tool-call summary { cursor: pointer; overflow-wrap: anywhere; } details.tool-call pre.text { max-height: 16em; margin: .2em 0 .4em; }
`;
