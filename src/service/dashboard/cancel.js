// Cancelling a build or a build group, from the list or a build's page: the
// confirmation dialog, then the request.
import { api } from "./api.js";
import { setText } from "./dom.js";
import { whatOf } from "./record.js";

const cancelDialog = document.getElementById("cancel-dialog");

// Asks before cancelling; resolves true when the user confirms.
export function confirmCancel(build) {
  const what = whatOf(build);
  return askToCancel("build", `Cancel build ${build.id} (${what.main})? TensorRT stops at its next progress step; ` +
    "the record, its events and the cancel reason are kept.", `Cancel build ${build.id}`);
}

// The same question for a group: every member that has not ended is cancelled.
export function confirmGroupCancel(group) {
  const targets = (group.targets || []).join(", ");
  return askToCancel("group", `Cancel group ${group.id} (${group.model || "builds"} for ${targets})? ` +
    "Every member that has not ended stops at its next progress step; members that ended keep their engines, " +
    "and every record, its events and the cancel reason are kept.", `Cancel group ${group.id}`);
}

function askToCancel(what, text, confirmLabel) {
  setText(document.getElementById("cancel-title"), `Cancel ${what}?`);
  setText(document.getElementById("cancel-text"), text);
  const confirm = document.getElementById("cancel-confirm");
  setText(confirm, `Cancel ${what}`);
  confirm.setAttribute("aria-label", confirmLabel);
  cancelDialog.returnValue = "";
  return new Promise((resolve) => {
    cancelDialog.addEventListener("close", () => resolve(cancelDialog.returnValue === "cancel"), {once: true});
    cancelDialog.showModal();
    document.getElementById("cancel-keep").focus();
  });
}

// The build's record as the service answers the cancel.
export async function requestCancel(build) {
  return api(`/builds/${encodeURIComponent(build.id)}/cancel`, {method: "POST"});
}

// The group document as the service answers the cancel (202).
export async function requestGroupCancel(group) {
  return api(`/groups/${encodeURIComponent(group.id)}/cancel`, {method: "POST"});
}
