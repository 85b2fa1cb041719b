// The dashboard against the service's hard cases: the server dies and comes back on
// the same address while a build page is open, and a --token-file server signed into
// from the browser (session cookie, no token in any URL).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server, freePort, openPage, screenshot, tempDir, writeToken, removeDir, killWorker, serverAndBrowserPerFile } from "./harness.mjs";

let browser;
const shots = [];
serverAndBrowserPerFile((_, b) => { browser = b; }, { shots, withServer: false });

// Chromium reports each refused connection as a console error: expected while the server is down.
const SERVER_DOWN = [/ERR_CONNECTION_REFUSED/, /ERR_EMPTY_RESPONSE/, /ERR_CONNECTION_RESET/, /Failed to fetch/];

test("server restart: the page shows the outage, reconnects and shows the final state", { timeout: 90000 }, async () => {
  const dataDir = tempDir("restart");
  const port = await freePort();
  let server = await new Server({ dataDir, port }).start();
  let workerPid = 0;
  try {
    const b = await server.submit({ simulate: "large-transformer", seed: 2, speed: 1 });
    const page = await openPage(browser);
    await page.goto(`${server.url}/ui/builds/${b.id}`);
    await page.locator("ul.tree > li").first().waitFor({ timeout: 20000 });
    workerPid = (await server.waitFor(b.id, (r) => r.worker_pid > 0)).worker_pid;
    await server.stop("SIGKILL");  // no goodbye: the build is cut off mid-way
    killWorker(workerPid);
    await page.waitForFunction(() => ["reconnecting", "offline"].includes(document.getElementById("connection").dataset.state));
    await page.getByText("Connection lost — the state below is the last one received; reconnecting…").waitFor();
    shots.push(await screenshot(page, "build-reconnecting"));
    server = await new Server({ dataDir, port }).start();
    await page.waitForFunction(() => document.querySelector("main").dataset.status === "interrupted", null, { timeout: 30000 });
    await page.locator("#connection[data-state=live]").waitFor();
    await page.getByText("Interrupted: the service stopped while this build ran.").first().waitFor();
    shots.push(await screenshot(page, "build-interrupted"));
    assert.deepEqual(page.unexpectedErrors(SERVER_DOWN), []);
  } finally {
    await server.stopCleanly();
    killWorker(workerPid);
    removeDir(dataDir);
  }
});

test("token sign-in: a session cookie, HttpOnly and SameSite=Strict, no token in URLs", { timeout: 60000 }, async () => {
  const dir = tempDir("token");
  const token = "0123456789abcdef0123456789abcdef";
  const server = await new Server({ dataDir: dir + "/data", args: ["--token-file", writeToken(dir, token)] }).start();
  try {
    const auth = { Authorization: `Bearer ${token}` };
    const b = await server.submit({ simulate: "small-cnn", speed: 4 }, auth);
    const page = await openPage(browser);
    const urls = [];
    page.on("request", (r) => urls.push(r.url()));
    await page.goto(`${server.url}/ui/builds/${b.id}`);
    await page.getByRole("heading", { name: "Sign in to trtwatch" }).waitFor();
    shots.push(await screenshot(page, "sign-in"));
    await page.getByLabel("Access token").fill("not-the-token-at-all");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText(/That token is not the server's/).waitFor();
    await page.getByLabel("Access token").fill(token);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: b.id }).waitFor();  // back on the page asked for
    await page.locator("main[data-final=true]").waitFor({ timeout: 30000 });
    const cookies = await page.context().cookies();
    assert.equal(cookies.length, 1);
    assert.equal(cookies[0].name, "trtwatch_session");
    assert.equal(cookies[0].httpOnly, true);
    assert.equal(cookies[0].sameSite, "Strict");
    assert.ok(!cookies[0].value.includes(token), "the cookie is not the token");
    assert.equal(await page.evaluate(() => document.cookie), "", "scripts cannot read the session");
    assert.ok(urls.every((u) => !u.includes(token)), "the token is in no URL");
    // The cookie is a session for this browser only: the API still wants the token elsewhere.
    assert.equal((await server.api("GET", "/builds")).status, 401);
    assert.equal((await server.api("GET", "/builds", undefined, { Cookie: "trtwatch_session=" + "0".repeat(64) })).status, 401);
    const cookie = `trtwatch_session=${cookies[0].value}`;
    assert.equal((await server.api("GET", "/builds", undefined, { Cookie: cookie })).status, 200);
    // Signing out revokes the session on the server, not just in the browser.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to trtwatch" }).waitFor();
    assert.equal((await server.api("GET", "/builds", undefined, { Cookie: cookie })).status, 401);
    // The wrong token's 401 is the one console error this test provokes.
    assert.deepEqual(page.unexpectedErrors([/status of 401/]), []);
  } finally {
    await server.stopCleanly();
    removeDir(dir);
  }
});

test("submit errors are shown next to the form: bad profile (400), full queue (429)", { timeout: 60000 }, async () => {
  const server = await new Server({ args: ["--max-concurrent", "1", "--queue-limit", "1"] }).start();
  try {
    const busy = await server.submit({ simulate: "large-transformer", speed: 1 });
    const waiting = await server.submit({ simulate: "large-transformer", speed: 1 });
    const page = await openPage(browser);
    await page.goto(server.url + "/");
    await page.locator("details.submit summary").click();
    await page.getByLabel("Profile").fill("no-such-profile");
    await page.getByRole("button", { name: "Start build" }).click();
    await page.locator(".form-error").getByText(/unknown simulation profile "no-such-profile"/).waitFor();
    await page.getByLabel("Profile").fill("small-cnn");
    await page.getByRole("button", { name: "Start build" }).click();
    await page.locator(".form-error").getByText(/The queue is full \(429\)/).waitFor();
    assert.match(page.url(), /\/$/, "still on the list");
    shots.push(await screenshot(page, "submit-429"));
    await server.api("POST", `/builds/${waiting.id}/cancel`);
    await server.api("POST", `/builds/${busy.id}/cancel`);
    assert.deepEqual(page.unexpectedErrors([/status of 400/, /status of 429/]), []);
  } finally {
    await server.stopCleanly();
    removeDir(server.dataDir);
  }
});
