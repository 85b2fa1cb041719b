// The dashboard of `trtwatch serve`, driven in headless Chromium as a user would:
// the list, a build page with its live tree, a silent stretch, cancel (mouse and
// keyboard), reload, phone and dark themes. Server restarts and token sign-in are in
// service.test.mjs, the 7,500-event replay timing in replay.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Server, openPage, screenshot, sleep, removeDir, tempDir, closePage, serverAndBrowserPerFile } from "./harness.mjs";

let server;
let browser;
const shots = [];

serverAndBrowserPerFile((s, b) => { server = s; browser = b; }, { shots });

async function waitStatus(page, status, timeout = 60000) {
  await page.waitForFunction((s) => document.querySelector("main").dataset.status === s, status, { timeout });
}
function assertNoErrors(page, allowed) {
  assert.deepEqual(page.unexpectedErrors(allowed), [], "console errors or exceptions on the page");
}

// The page is native ES modules: each must come from /ui/ with a JavaScript type (or the
// browser refuses to run it) and the dashboard's security headers, and every module in
// src/service/dashboard/ must be reached from main.js.
test("the page loads every dashboard module as JavaScript, with the security headers", { timeout: 30000 }, async () => {
  const page = await openPage(browser);
  const scripts = new Map();
  page.on("response", (r) => { if (r.request().resourceType() === "script") scripts.set(new URL(r.url()).pathname, r); });
  const pageResponse = await page.goto(server.url + "/");
  assert.match(pageResponse.headers()["content-security-policy"], /script-src 'self'/);
  await page.getByRole("heading", { name: "Builds" }).waitFor();
  const modules = readdirSync(new URL("../../src/service/dashboard/", import.meta.url)).filter((f) => f.endsWith(".js"));
  assert.deepEqual([...scripts.keys()].sort(), modules.map((f) => `/ui/${f}`).sort());
  for (const [path, r] of scripts) {
    assert.equal(r.status(), 200, path);
    assert.equal(r.headers()["content-type"], "text/javascript; charset=utf-8", path);
    assert.equal(r.headers()["x-content-type-options"], "nosniff", path);
    assert.match(r.headers()["content-security-policy"], /script-src 'self'/, path);
  }
  assertNoErrors(page);
  await closePage(page);
});

test("submit from the list, watch it live, see it finish, find it in the list", { timeout: 90000 }, async () => {
  const page = await openPage(browser);
  await page.goto(server.url + "/");
  await page.getByRole("heading", { name: "Builds" }).waitFor();
  await page.locator("details.submit summary").click();
  await page.getByLabel("Speed ×").fill("2");
  await page.getByRole("button", { name: "Start build" }).click();
  await page.waitForURL(/\/ui\/builds\/b_[0-9a-f]{32}$/);
  const id = page.url().split("/").pop();
  await page.getByRole("heading", { name: id }).waitFor();
  // Live: a phase row appears and its step count moves while the build runs.
  const root = page.locator("ul.tree > li").first();
  await root.waitFor();
  const first = await root.locator(".count").first().textContent();
  await page.waitForFunction((before) => document.querySelector("ul.tree > li .count").textContent !== before, first);
  shots.push(await screenshot(page, "build-running"));
  await waitStatus(page, "succeeded");
  await page.locator("main[data-final=true]").waitFor();
  await assert.doesNotReject(page.getByText(/Succeeded in \d/).waitFor());
  await page.getByRole("heading", { name: "Where the time went" }).waitFor();
  assert.ok(await page.locator("table.summary tbody tr").count() >= 5, "a phase summary with rows");
  // The Chrome trace of the build, as the service serves it.
  const traceLink = page.getByRole("link", { name: "Download the Chrome trace" });
  await traceLink.waitFor();
  const trace = await page.evaluate(async (href) => (await fetch(href)).json(), await traceLink.getAttribute("href"));
  assert.ok(trace.traceEvents.some((e) => e.ph === "X" && e.name === "Building engine"), "a span per phase");
  shots.push(await screenshot(page, "build-succeeded"));
  // The list shows it with its badge, model and a duration; the link leads back.
  await page.getByRole("link", { name: "← All builds" }).click();
  const row = page.locator(`tr[data-id="${id}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute("data-status"), "succeeded");
  assert.match(await row.locator("td[data-label=Duration]").textContent(), /\d+(\.\d)? s/);
  assert.match(await row.textContent(), /small-cnn/);
  shots.push(await screenshot(page, "list"));
  assertNoErrors(page);
});

test("the list follows builds submitted elsewhere, pushed, and filters by status", { timeout: 60000 }, async () => {
  const page = await openPage(browser);
  const listReads = [];
  page.on("request", (r) => {
    if (r.method() === "GET" && new URL(r.url()).pathname === "/builds") listReads.push(r.url());
  });
  await page.goto(server.url + "/");
  await page.getByRole("heading", { name: "Builds" }).waitFor();
  await page.locator("main[data-live=true]").waitFor();  // the change stream is open
  await sleep(200);  // the read that follows the stream's opening
  const reads = listReads.length;
  const b = await server.submit({ simulate: "small-cnn", speed: 1 });
  const row = page.locator(`tr[data-id="${b.id}"]`);
  await row.waitFor({ timeout: 5000 });  // without a reload
  await page.waitForFunction((id) => document.querySelector(`tr[data-id="${id}"]`).dataset.status === "succeeded",
    b.id, { timeout: 30000 });
  // Queued, running, succeeded arrived as pushed changes: the list was not read again.
  assert.equal(listReads.length, reads, `the list was polled: ${listReads.slice(reads).join(", ")}`);
  // Focus survives the updates: the row's link keeps it across the ticks.
  await row.locator("a.build-link").focus();
  await sleep(3500);
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), `Build ${b.id}`);
  await page.getByRole("checkbox", { name: "failed" }).check();
  await page.waitForURL(/\?status=failed$/);
  await page.waitForFunction(() => !document.querySelector("tr[data-status=succeeded]"));
  await page.getByText("No builds with these statuses.").waitFor();
  await page.reload();
  assert.equal(await page.getByRole("checkbox", { name: "failed" }).isChecked(), true, "the filter is in the URL");
  assertNoErrors(page);
});

test("a failed build shows its error, wrapped, and the page never scrolls sideways", { timeout: 60000 }, async () => {
  const b = await server.submit({ simulate: "failing", speed: 2 });
  const page = await openPage(browser);
  await page.goto(`${server.url}/ui/builds/${b.id}`);
  await waitStatus(page, "failed");
  await page.locator(".error-box").getByText(/Could not find any implementation/).waitFor();
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
  shots.push(await screenshot(page, "build-failed"));
  assertNoErrors(page);
});

test("a large build: nested tree under its parents, reload, a silent stretch", { timeout: 120000 }, async () => {
  // large-transformer: 4 builder threads under "Timing graph nodes", then 30-40 s of
  // silence (5-7 s at speed 6) before the engine is assembled.
  const b = await server.submit({ simulate: "large-transformer", seed: 3, speed: 6 });
  try {
    const page = await openPage(browser);
    await page.goto(`${server.url}/ui/builds/${b.id}`);
    await page.locator("li[data-phase] .name", { hasText: /^Finding fastest tactic for node/ }).first().waitFor({ timeout: 30000 });
    // Every child sits under its own parent, however the threads interleave.
    for (let i = 0; i < 5; ++i) {
      const misplaced = await page.evaluate(() => {
        const bad = [];
        for (const li of document.querySelectorAll("li[data-phase]")) {
          const name = li.querySelector(".name").textContent;
          const parent = li.parentElement.closest("li");
          const parentName = parent ? parent.querySelector(".name").textContent : null;
          if (name.startsWith("Finding fastest tactic") && parentName !== "Timing graph nodes") bad.push(`${name} under ${parentName}`);
          if (name === "Measuring tactic time" && !/^(Finding fastest tactic|Evaluating tactic times)/.test(parentName)) bad.push(`${name} under ${parentName}`);
        }
        return bad;
      });
      assert.deepEqual(misplaced, []);
      await sleep(150);
    }
    assert.ok(await page.locator("li[data-phase] .name", { hasText: /^Finding fastest tactic/ }).count() >= 2,
      "several builder threads' phases at once");
    shots.push(await screenshot(page, "build-threads"));
    // A reload on the build's URL resumes the same build, live.
    await page.reload();
    await page.getByRole("heading", { name: b.id }).waitFor();
    await page.locator("ul.tree > li").first().waitFor();
    await waitStatus(page, "running");
    // The silent stretch: no callbacks, yet the page says how long and why. Read in the
    // page, in one go: on a loaded machine the stretch may end between two queries.
    const silentText = await page.waitForFunction(() => {
      const line = document.querySelector(".live-line[data-kind=silent]");
      return line && { text: line.textContent, elapsed: document.querySelector("dd[data-fact=elapsed]").textContent };
    }, undefined, { timeout: 60000 }).then((h) => h.jsonValue());
    assert.match(silentText.text, /^Last activity \d+ s ago — TensorRT is inside one step of “Building engine” \d+\/6/);
    // Elapsed keeps counting in silence.
    await page.waitForFunction((before) => document.querySelector("dd[data-fact=elapsed]").textContent !== before,
      silentText.elapsed, { timeout: 5000 });
    shots.push(await screenshot(page, "build-silent"));
    // Cancelled in the silence: "cancelling" lasts until TensorRT's step ends.
    await server.api("POST", `/builds/${b.id}/cancel`);
    try {
      await page.locator(".live-line[data-kind=cancelling]").waitFor({ timeout: 3000 });
      shots.push(await screenshot(page, "build-cancelling"));
    } catch { /* the silence had just ended */ }
    await waitStatus(page, "cancelled", 30000);
    // The reason is the client's (api), not the SIGTERM the worker saw.
    await page.waitForFunction(() => document.querySelector("main").dataset.cancelReason === "api");
    assert.match(await page.locator("dd[data-fact=cancel]").textContent(), /^api: /);
    assertNoErrors(page);
  } finally {
    // A failure above must not leave a build of 4 busy threads to slow the next tests.
    await server.api("POST", `/builds/${b.id}/cancel`).catch(() => {});
  }
});

// Records every state main[data-status] goes through, and when, from the confirming click.
async function watchStates(page) {
  await page.evaluate(() => {
    const main = document.querySelector("main");
    window.__states = [{ status: main.dataset.status, t: performance.now() }];
    new MutationObserver(() => {
      if (window.__states[window.__states.length - 1].status !== main.dataset.status) {
        window.__states.push({ status: main.dataset.status, t: performance.now() });
      }
    }).observe(main, { attributes: true, attributeFilter: ["data-status"] });
    document.addEventListener("click", (e) => { if (e.target.id === "cancel-confirm") window.__clickAt = performance.now(); }, true);
  });
}

test("cancel: a confirmation naming the build, cancelling at once, then cancelled with reason and latency", { timeout: 60000 }, async () => {
  const b = await server.submit({ simulate: "large-transformer", seed: 7, speed: 1 });
  const page = await openPage(browser);
  await page.goto(`${server.url}/ui/builds/${b.id}`);
  await waitStatus(page, "running");
  await page.locator("ul.tree > li").first().waitFor();
  await watchStates(page);
  await page.getByRole("button", { name: `Cancel build ${b.id}` }).click();
  const dialog = page.getByRole("dialog", { name: "Cancel build?" });
  await dialog.waitFor();
  assert.match(await dialog.textContent(), new RegExp(b.id));
  shots.push(await screenshot(page, "cancel-confirm"));
  await dialog.getByRole("button", { name: `Cancel build ${b.id}` }).click();
  await waitStatus(page, "cancelled", 30000);
  const { states, clickAt } = await page.evaluate(() => ({ states: window.__states, clickAt: window.__clickAt }));
  assert.deepEqual(states.map((s) => s.status), ["running", "cancelling", "cancelled"]);
  const toCancelling = states[1].t - clickAt;
  assert.ok(toCancelling < 250, `cancelling shown ${toCancelling} ms after the click`);
  await page.getByText(/Cancelled after .* reason: api/).waitFor();
  assert.match(await page.locator("dd[data-fact=latency]").textContent(), /stopped .* after the request/);
  shots.push(await screenshot(page, "build-cancelled"));
  console.log(`cancel: "cancelling" shown ${toCancelling.toFixed(1)} ms after the click, cancelled ` +
    `${(states[2].t - clickAt).toFixed(0)} ms after it`);
  assertNoErrors(page);
});

test("keyboard only: tab to cancel, confirm, focus stays on the page", { timeout: 60000 }, async () => {
  const b = await server.submit({ simulate: "large-transformer", seed: 4, speed: 1 });
  const page = await openPage(browser);
  await page.goto(`${server.url}/ui/builds/${b.id}`);
  await waitStatus(page, "running");
  await page.getByRole("button", { name: `Cancel build ${b.id}` }).waitFor();
  let found = false;
  for (let i = 0; i < 20 && !found; ++i) {
    await page.keyboard.press("Tab");
    found = await page.evaluate((id) => document.activeElement.getAttribute("aria-label") === `Cancel build ${id}`, b.id);
  }
  assert.ok(found, "the cancel button is reachable with Tab");
  await page.keyboard.press("Enter");
  await page.getByRole("dialog").waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Keep running", "the safe choice has focus");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await waitStatus(page, "cancelled", 30000);
  assert.notEqual(await page.evaluate(() => document.activeElement.tagName), "BODY", "focus is not dropped");
  assertNoErrors(page);
});

test("phone viewport and dark theme", { timeout: 60000 }, async () => {
  const b = await server.submit({ simulate: "small-cnn", speed: 4 });
  await server.waitFor(b.id, (r) => r.status === "succeeded");
  const phone = await openPage(browser, { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await phone.goto(server.url + "/");
  await phone.locator(`tr[data-id="${b.id}"]`).waitFor();
  assert.ok(await phone.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling on a phone");
  shots.push(await screenshot(phone, "phone-list"));
  await phone.goto(`${server.url}/ui/builds/${b.id}`);
  await phone.locator("main[data-final=true]").waitFor();
  assert.ok(await phone.evaluate(() => document.documentElement.scrollWidth <= 390));
  shots.push(await screenshot(phone, "phone-build"));
  assertNoErrors(phone);
  const dark = await openPage(browser, { colorScheme: "dark" });
  await dark.goto(`${server.url}/ui/builds/${b.id}`);
  await dark.locator("main[data-final=true]").waitFor();
  const bg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, "rgb(13, 17, 23)", "dark background");
  shots.push(await screenshot(dark, "build-dark"));
  assertNoErrors(dark);
});

// Models in, engines out (docs/dashboard.md): the submit form offers the uploaded models
// (GET /models), and a build page links its engine with its size. Real builds need the
// TensorRT test double's binary.
test("build an uploaded model from the form, then download its engine from the build page", { timeout: 90000 }, async (t) => {
  if (!process.env.TRTWATCH_DOUBLE_BIN) { t.skip("built without TRTWATCH_TENSORRT_DOUBLE_TESTS"); return; }
  const real = await new Server({ bin: process.env.TRTWATCH_DOUBLE_BIN,
    env: { LD_LIBRARY_PATH: process.env.TRTWATCH_FAKE_TENSORRT_DIR, FAKE_TENSORRT_ENGINE_BYTES: String(3 * 1024 * 1024) } }).start();
  try {
    const res = await fetch(real.url + "/models/resnet", { method: "PUT", body: "onnx bytes" });
    assert.equal(res.status, 201);
    const page = await openPage(browser);
    await page.goto(real.url + "/");
    await page.locator("details.submit summary").click();
    await page.getByLabel("Kind").selectOption("uploaded");
    const select = page.getByLabel("Uploaded model (PUT /models/NAME)");
    await page.waitForFunction(() => document.querySelector("select[name=uploaded]").options.length > 0);
    assert.match(await select.locator("option").first().textContent(), /^resnet \(10 B\)$/);
    await page.getByRole("button", { name: "Start build" }).click();
    await page.waitForURL(/\/ui\/builds\/b_/);
    await waitStatus(page, "succeeded");
    const link = page.locator("[data-fact=engine] a.download.engine");
    await link.waitFor();
    assert.equal(await link.textContent(), "Download engine (3.0 MiB)");
    const id = page.url().split("/").pop();
    assert.equal(await link.getAttribute("href"), `/builds/${id}/engine`);
    assert.equal(await link.getAttribute("download"), `${id}.engine`);
    const record = await (await fetch(`${real.url}/builds/${id}`)).json();
    assert.equal(record.request.model, "models:resnet");
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    assert.equal(download.suggestedFilename(), `${id}.engine`);
    shots.push(await screenshot(page, "build-engine-download"));
    assertNoErrors(page);
    await closePage(page);
  } finally {
    await real.stopCleanly();
    removeDir(real.dataDir);
  }
});

// An ONNX model whose one initializer is stored externally in `location` (as
// tests/e2e/test_engine_cache.py writes it): the build key hashes both files.
function onnxModel(location) {
  const varint = (n) => {
    const out = [];
    for (; n >= 0x80; n >>>= 7) out.push((n & 0x7f) | 0x80);
    return Buffer.from([...out, n]);
  };
  const field = (number, payload) => Buffer.concat([varint((number << 3) | 2), varint(payload.length), payload]);
  const external = field(13, Buffer.concat([field(1, Buffer.from("location")), field(2, Buffer.from(location))]));
  return field(7, field(5, Buffer.concat([field(8, Buffer.from("w")), external, Buffer.from([14 << 3, 1])])));
}

// The engine cache (docs/cache.md): a reused engine's page says so in the terminal's
// words, the list marks it with a small badge, and a miss's page says it was stored.
test("a reused engine: the build page says so as the terminal does, the list marks it", { timeout: 90000 }, async (t) => {
  if (!process.env.TRTWATCH_DOUBLE_BIN || !process.env.TRTWATCH_FAKE_DRIVER_DIR) {
    t.skip("built without TRTWATCH_TENSORRT_DOUBLE_TESTS");
    return;
  }
  const models = tempDir("models");
  writeFileSync(join(models, "net.onnx"), onnxModel("net.weights"));
  writeFileSync(join(models, "net.weights"), Buffer.alloc(4096, 7));
  const real = await new Server({ bin: process.env.TRTWATCH_DOUBLE_BIN, args: ["--model-root", models],
    env: { LD_LIBRARY_PATH: `${process.env.TRTWATCH_FAKE_TENSORRT_DIR}:${process.env.TRTWATCH_FAKE_DRIVER_DIR}` } }).start();
  try {
    const request = { model: join(models, "net.onnx"), options: { fp16: true } };
    const done = (b) => !["queued", "running", "cancelling"].includes(b.status);
    const built = await real.waitFor((await real.submit(request)).id, done);
    const reused = await real.waitFor((await real.submit(request)).id, done);
    assert.equal(built.cache.state, "miss");
    assert.equal(reused.cache.state, "hit");
    const page = await openPage(browser);
    await page.goto(`${real.url}/ui/builds/${built.id}`);
    await waitStatus(page, "succeeded");
    await page.locator("[data-fact=cache]").getByText("built and stored in the engine cache").waitFor();
    assert.equal(await page.locator(".head .badge[data-status=cached]").count(), 0);
    await page.goto(`${real.url}/ui/builds/${reused.id}`);
    await waitStatus(page, "succeeded");
    const said = new RegExp(`reused the engine built \\d+ seconds? ago in \\d+\\.\\ds \\(engine cache, key ${reused.cache.key.slice(0, 12)}\\)`);
    await page.locator("[data-fact=cache]").getByText(said).waitFor();
    await page.locator(".live-line").getByText(/^Succeeded in .*: reused the engine built /).waitFor();
    assert.equal(await page.locator(".head .badge[data-status=cached]").textContent(), "cache hit");
    shots.push(await screenshot(page, "build-cache-hit"));
    await page.goto(real.url + "/");
    const hitBadge = page.locator(`tr[data-id="${reused.id}"] .badge[data-status=cached]`);
    await hitBadge.waitFor();
    assert.equal(await hitBadge.textContent(), "cache hit");
    assert.match(await hitBadge.getAttribute("title"), said);
    await page.locator(`tr[data-id="${built.id}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-id="${built.id}"] .badge[data-status=cached]`).count(), 0);
    shots.push(await screenshot(page, "list-cache-hit"));
    assertNoErrors(page);
    await closePage(page);
  } finally {
    await real.stopCleanly();
    removeDir(real.dataDir);
    removeDir(models);
  }
});

// Issue 37: the builds page lists the service's timing caches (GET /timing-caches), a
// build names the cache it was given, and a cache can be downloaded and deleted.
test("the timing caches show what they did for the builds, and a cache can be deleted", { timeout: 90000 }, async () => {
  const first = await server.submit({ simulate: "small-cnn", seed: 21, speed: 20 });
  await server.waitFor(first.id, (r) => r.status === "succeeded");
  const second = await server.submit({ simulate: "small-cnn", seed: 21, speed: 20 });
  const record = await server.waitFor(second.id, (r) => r.status === "succeeded");
  const name = record.fleet_timing_cache.name;
  const [cache] = (await server.api("GET", "/timing-caches")).body.timing_caches.filter((c) => c.name === name);
  const page = await openPage(browser);
  await page.goto(`${server.url}/ui/builds/${second.id}`);
  const given = page.locator("a.download.fleet-timing-cache");
  await given.waitFor();
  assert.equal(await given.getAttribute("href"), `/timing-caches/${name}`);

  await page.goto(server.url + "/");
  const row = page.locator(`.timing-caches tr[data-name="${name}"]`);
  await row.waitFor();
  const cells = await row.locator("td").allTextContents();
  assert.deepEqual(cells.slice(0, 2), ["simulated GPU", "trtwatch simulator 1"]);
  assert.equal(cells[5], String(cache.builds_served));
  assert.equal(cells[6], String(cache.builds_contributed));
  shots.push(await screenshot(page, "timing-caches"));
  await row.getByRole("button", { name: `Delete the timing cache ${name}` }).click();
  await row.waitFor({ state: "detached" });
  assert.deepEqual((await server.api("GET", "/timing-caches")).body.timing_caches.filter((c) => c.name === name), []);
  assertNoErrors(page);
  await closePage(page);
});
