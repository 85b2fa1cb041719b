// The page's alert area: messages the user dismisses. A key replaces the previous
// message of the same kind instead of stacking it.
import { h } from "./dom.js";

const alerts = document.getElementById("alerts");

export function showAlert(message, key) {
  for (const old of alerts.children) if (key && old.dataset.key === key) old.remove();
  const close = h("button.link", {type: "button", text: "Dismiss", "aria-label": "Dismiss this message"});
  const box = h("div.alert", {dataset: {key: key || ""}}, h("p", {text: message}), close);
  close.addEventListener("click", () => box.remove());
  alerts.append(box);
}

export function clearAlert(key) { for (const old of [...alerts.children]) if (old.dataset.key === key) old.remove(); }
