// Which view is on screen. The page routes itself (the server serves the same page for
// every dashboard URL): in-page links carry data-nav and change the URL with the
// History API, and the back button routes again. The sign-in form suspends routing
// until it succeeds.
import { mainEl } from "./dom.js";

let viewFor = null;       // path -> a new view (main.js decides)
let current = null;       // the view on screen
let suspended = false;    // the sign-in form is on screen instead of a view

export function currentView() { return current; }

export function startRouter(viewForPath) {
  viewFor = viewForPath;
  document.addEventListener("click", followLink);
  window.addEventListener("popstate", route);
}

export function route() {
  if (suspended) return;
  if (current) current.destroy();
  current = viewFor(location.pathname);
}

export function navigate(url) {
  history.pushState(null, "", url);
  route();
  const heading = mainEl.querySelector("h1");
  if (heading) heading.focus({preventScroll: true});
}

// Takes the view off screen and keeps routing off until resumeRouting(). False when
// routing was suspended already.
export function suspendRouting() {
  if (suspended) return false;
  suspended = true;
  if (current) current.destroy();
  current = null;
  return true;
}

export function resumeRouting() {
  suspended = false;
  route();
}

// A plain left click on an in-page link; a modified click (new tab, download) stays the browser's.
function followLink(e) {
  const a = e.target.closest && e.target.closest("a[data-nav]");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute("href"));
}
