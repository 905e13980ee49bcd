const pad = (n: number) => String(n).padStart(2, "0");

/** Local time, `YYYY-MM-DD HH:MM:SS`; a dash when there is none. */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined) return "-";
  const d = new Date(ms);
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return `${date} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `+4s`, `+2m 05s`, `+1h 03m`: time since a start, for a timeline. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `+${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `+${minutes}m ${pad(seconds % 60)}s`;
  return `+${Math.floor(minutes / 60)}h ${pad(minutes % 60)}m`;
}
