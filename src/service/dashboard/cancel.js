// Cancelling a build, from the list or its page: the confirmation dialog, then the request.
import { api } from "./api.js";
import { setText } from "./dom.js";
import { whatOf } from "./record.js";

const cancelDialog = document.getElementById("cancel-dialog");

// Asks before cancelling; resolves true when the user confirms.
export function confirmCancel(build) {
  const what = whatOf(build);
  setText(document.getElementById("cancel-text"),
    `Cancel build ${build.id} (${what.main})? TensorRT stops at its next progress step; ` +
    "the record, its events and the cancel reason are kept.");
  document.getElementById("cancel-confirm").setAttribute("aria-label", `Cancel build ${build.id}`);
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
