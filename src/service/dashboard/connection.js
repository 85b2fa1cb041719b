// The connection indicator in the header: whether what the page shows is live.
import { setAttr, setText } from "./dom.js";

const indicator = document.getElementById("connection");
const CONNECTION_TEXT = {connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…",
  offline: "Offline — retrying", "signed-out": "Signed out"};
let state = "connecting";

// One of CONNECTION_TEXT's keys.
export function connectionState() { return state; }

export function setConnection(newState, detail) {
  state = newState;
  setAttr(indicator, "data-state", newState);
  setText(indicator, detail || CONNECTION_TEXT[newState]);
  document.body.classList.toggle("is-offline", newState === "offline" || newState === "reconnecting");
}
