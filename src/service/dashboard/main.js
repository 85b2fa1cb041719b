// trtwatch dashboard, served by `trtwatch serve`: the entry module. It decides which
// view a URL shows, keeps the view's clocks ticking, and starts once the session allows.
// Native ES modules, no framework and no build step: each view builds its DOM once and
// then updates it in place (dom.js).
import { onSignInNeeded } from "./api.js";
import { AuditView } from "./audit_view.js";
import { BuildView } from "./build_view.js";
import { ListView } from "./list_view.js";
import { currentView, route, startRouter } from "./router.js";
import { requireSignIn, sessionAllowsViews } from "./signin.js";

onSignInNeeded(requireSignIn);

startRouter((path) => {
  if (path === "/ui/audit") return new AuditView();
  const match = path.match(/^\/ui\/builds\/([^/]+)$/);
  return match ? new BuildView(decodeURIComponent(match[1])) : new ListView();
});

// Relative times and running durations move on between updates.
setInterval(() => { if (currentView()) currentView().tick(); }, 1000);

// A hidden tab polls the list slowly: catch up as soon as it is shown again.
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && currentView() instanceof ListView) currentView().refresh();
});

(async () => {
  if (await sessionAllowsViews()) route();
})();
