// The audit trail's table rows, as text: pure (no DOM), so tests/node checks them
// without a browser. audit_view.js draws them.
import { fmtClock } from "./format.js";

// Where an action's target is shown as a link in the dashboard.
const TARGET_PAGES = {"build.submit": "/ui/builds/", "build.cancel": "/ui/builds/"};

// One entry of GET /audit as the table's cells: time, user, action, target, detail;
// `link` is the target's dashboard page, or null.
export function auditRow(entry) {
  const ms = Date.parse(entry.at);
  const page = TARGET_PAGES[entry.action];
  return {
    time: Number.isFinite(ms) ? fmtClock(ms) : String(entry.at ?? ""),
    user: String(entry.user ?? ""),
    action: String(entry.action ?? ""),
    target: String(entry.target ?? "") || "—",
    link: page && entry.target ? page + encodeURIComponent(entry.target) : null,
    detail: detailText(entry.detail),
  };
}

// The detail object as "key: value" pairs, in its order; "" for none.
export function detailText(detail) {
  if (!detail || typeof detail !== "object") return "";
  return Object.entries(detail)
    .filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(", ");
}

// What the view says when GET /audit fails: the status tells a refusal from an outage.
export function auditErrorText(status, message) {
  if (status === 403) return "The audit trail is for admins.";
  return `Could not read the audit trail: ${message}.`;
}
