// Signing in to a server started with --users or --token-file: the user's token is
// traded for a session cookie (POST /ui/session) and never kept by the page. The
// session's role goes on <body data-role>, so that a viewer sees no cancel buttons
// (the server refuses them anyway). The form replaces the view
// until it succeeds; "Sign out" ends the session.
import { api } from "./api.js";
import { showAlert } from "./alerts.js";
import { setConnection } from "./connection.js";
import { h, mainEl, setText } from "./dom.js";
import { resumeRouting, suspendRouting } from "./router.js";

const signOutButton = document.getElementById("sign-out");

// Whether views may be shown at start: false when the server wants a sign-in first (the
// form is then on screen) or when the session cannot be read.
export async function sessionAllowsViews() {
  try {
    const session = await api("/ui/session");
    signOutButton.hidden = !(session.token_required && session.signed_in);
    document.body.dataset.role = session.role || "";
    if (session.token_required && !session.signed_in) { requireSignIn(); return false; }
  } catch (e) {
    if (e.status === 401) return false;
    if (e.status !== 404) showAlert(e.message, "start");  // 404: an older server without sign-in
  }
  return true;
}

export function requireSignIn() {
  if (!suspendRouting()) return;  // the form is on screen already
  setConnection("signed-out");
  const input = h("input", {type: "password", id: "token", name: "token", autocomplete: "current-password",
    required: true, "aria-describedby": "token-help"});
  const error = h("p.form-error", {role: "alert"});
  const form = h("form", {on: {submit: (e) => signIn(e, input, error)}},
    h("label", {for: "token", text: "Access token"}), input,
    h("p.muted", {id: "token-help", text: "This server was started with --users or --token-file. Paste your token; " +
      "it is exchanged for a browser session cookie and is not stored by this page."}),
    error, h("button.primary", {type: "submit", text: "Sign in"}));
  mainEl.replaceChildren(h("section.panel.signin", {"aria-labelledby": "signin-title"},
    h("h1", {id: "signin-title", text: "Sign in to trtwatch"}), form));
  input.focus();
}

async function signIn(e, input, error) {
  e.preventDefault();
  setText(error, "");
  try {
    const session = await api("/ui/session", {method: "POST", body: JSON.stringify({token: input.value.trim()})});
    document.body.dataset.role = (session && session.role) || "";
    input.value = "";
    signOutButton.hidden = false;
    setConnection("connecting");
    resumeRouting();
  } catch (err) {
    setText(error, err.status === 401 ? "That token is not the server's. Check the --token-file it was started with."
      : err.message);
    input.focus();
  }
}

signOutButton.addEventListener("click", async () => {
  try { await api("/ui/session", {method: "DELETE"}); } catch (e) { /* signed out anyway */ }
  signOutButton.hidden = true;
  requireSignIn();
});
