// The service's JSON API: fetch with the dashboard's defaults, errors as ApiError, the
// connection indicator kept in step, and a sign-in asked for when the server wants one.
import { connectionState, setConnection } from "./connection.js";

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// The sign-in form registers itself here (main.js): a hook rather than an import, as the
// form itself calls api().
let askForSignIn = () => {};
export function onSignInNeeded(handler) { askForSignIn = handler; }
export function signInNeeded() { askForSignIn(); }

// fetch + JSON; 401 opens the sign-in form; a network failure marks the page offline.
export async function api(path, options = {}) {
  let res;
  try {
    res = await fetch(path, {cache: "no-store", ...options,
      headers: {Accept: "application/json", ...(options.body ? {"Content-Type": "application/json"} : {}), ...options.headers}});
  } catch (e) {
    setConnection("offline", "Offline — cannot reach trtwatch serve");
    throw new ApiError(0, "cannot reach the trtwatch service (is `trtwatch serve` running?)");
  }
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (res.status === 401 && path !== "/ui/session") {
    signInNeeded();
    throw new ApiError(401, "sign in with the server's token");
  }
  if (!res.ok) throw new ApiError(res.status, (body && body.error) || `${res.status} ${res.statusText}`);
  if (connectionState() !== "live" && connectionState() !== "signed-out") setConnection("live");
  return body;
}

// Does this server offer this path (as its OpenAPI document names it, "/builds/{id}/trace")?
// The document is read once: an older server lacks the newer endpoints, and asking them
// anyway would only fill the console with 404s.
let openApiPaths = null;
export function serverOffers(path) {
  if (!openApiPaths) {
    openApiPaths = api("/openapi.json").then((doc) => (doc && doc.paths) || {}, () => { openApiPaths = null; return {}; });
  }
  return openApiPaths.then((paths) => Boolean(paths[path]));
}
export const hasTraceEndpoint = () => serverOffers("/builds/{id}/trace");
