// Numbers, durations, clock times and ids as the dashboard shows them.

export function fmtDuration(s) {
  if (s === null || s === undefined || !isFinite(s)) return "—";
  if (s < 0) s = 0;
  if (s < 10) return s.toFixed(1) + " s";
  if (s < 60) return Math.floor(s) + " s";
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

// The terminal's words for a duration and an age (src/sinks/format.cc), where the
// dashboard repeats a sentence the terminal says: "12.3s", "14m02s", "1h02m"; "3 days".
export function fmtTerminalDuration(s) {
  if (!(s > 0)) s = 0;
  const two = (n) => String(n).padStart(2, "0");
  if (s < 60) return (Math.floor(s * 10) / 10).toFixed(1) + "s";
  if (s < 3600) return `${Math.floor(s / 60)}m${two(Math.floor(s) % 60)}s`;
  const m = Math.floor(s / 60);
  return `${Math.floor(m / 60)}h${two(m % 60)}m`;
}
export function fmtAge(s) {
  if (!(s > 0)) s = 0;
  for (const [unit, name] of [[86400, "day"], [3600, "hour"], [60, "minute"], [1, "second"]]) {
    const count = Math.floor(s / unit);
    if (count >= 1 || unit === 1) return `${count} ${name}${count === 1 ? "" : "s"}`;
  }
  return "0 seconds";
}

export function fmtRelative(ms, now) {
  if (!ms) return "—";
  const s = Math.max(0, (now - ms) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return Math.floor(s) + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  if (s < 7 * 86400) return Math.floor(s / 86400) + " d ago";
  return fmtClock(ms).slice(0, 10);
}

// "2026-11-30 09:44:29" in local time. Not Intl: its first use costs tens of milliseconds.
export function fmtClock(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

export const fmtCount = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

export function fmtBytes(n) {
  if (typeof n !== "number") return null;
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
  return (i ? n.toFixed(1) : String(n)) + " " + units[i];
}

// The change from one duration to another: "+12.0 s (+8 %)", "-3 s (-2 %)".
export function fmtChange(before, after) {
  const delta = after - before;
  const sign = delta >= 0 ? "+" : "-";
  const percent = before > 0 ? ` (${sign}${Math.round((Math.abs(delta) / before) * 100)} %)` : "";
  return `${sign}${fmtDuration(Math.abs(delta))}${percent}`;
}

// Milliseconds since the epoch of an ISO time from the API; 0 when there is none.
export const parseTime = (iso) => (iso ? Date.parse(iso) : 0);

export function shortId(id) { return id.length > 14 ? id.slice(0, 12) + "…" : id; }
