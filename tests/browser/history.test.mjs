// The dashboard's views of the build history (ETA, the chart of earlier builds, the
// comparison), the list's model filter and build groups, in headless Chromium against a
// real `trtwatch serve`. The service's answers for history, ETA and groups are fixed
// here to the API's documented form (docs/api.md) by intercepting those requests, so the
// views are checked word for word and point for point whatever the store holds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openPage, screenshot, closePage, serverAndBrowserPerFile } from "./harness.mjs";

let server;
let browser;
const shots = [];

serverAndBrowserPerFile((s, b) => { server = s; browser = b; }, { shots });

function assertNoErrors(page, allowed) {
  assert.deepEqual(page.unexpectedErrors(allowed), [], "console errors or exceptions on the page");
}

// The record of `id` as the service answers it, with `extra` fields added.
async function withRecordFields(page, id, extra) {
  await page.route((url) => url.pathname === `/builds/${id}`, async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, json: { ...(await response.json()), ...extra } });
  });
}

const KEY = "ab".repeat(32);

// The service's OpenAPI document listing the history endpoints: the build page asks for
// the history only where the server offers it.
async function offerHistory(page) {
  await page.route((url) => url.pathname === "/openapi.json", async (route) => {
    const response = await route.fetch();
    const doc = await response.json();
    doc.paths["/history"] ??= { get: {} };
    doc.paths["/builds/{id}/compare"] ??= { get: {} };
    await route.fulfill({ response, json: doc });
  });
}

test("a running build with 4 earlier builds shows the remaining time as a range that counts down", { timeout: 90000 }, async () => {
  const b = await server.submit({ simulate: "large-transformer", seed: 11, speed: 0.5 });
  await server.waitFor(b.id, (r) => r.status === "running");
  const page = await openPage(browser);
  // Given at t = 1 s (after the worker's own first estimate): 20–30 s left. Without a newer estimate the page counts it down.
  await withRecordFields(page, b.id, { history_key: KEY, estimate: { remaining: { p10: 20, p50: 25, p90: 30 },
    based_on: { builds: 4, match: "exact" }, longer_than_history: false, t: 1 } });
  await page.goto(`${server.url}/ui/builds/${b.id}`);
  const eta = page.locator(".eta-line");
  await eta.waitFor();
  assert.match(await eta.textContent(), /^about \d+–\d+ s left, from 4 earlier builds$/);
  const first = await eta.textContent();
  await page.waitForFunction((before) => {
    const m = document.querySelector(".eta-line").textContent.match(/^about (\d+)–(\d+) s left/);
    return m && document.querySelector(".eta-line").textContent !== before && Number(m[2]) < 30;
  }, first, { timeout: 30000 });
  shots.push(await screenshot(page, "build-eta"));
  await server.api("POST", `/builds/${b.id}/cancel`);
  await closePage(page);
});

test("the list row of a running build shows the short ETA; the page says plainly when there is none", { timeout: 90000 }, async () => {
  const b = await server.submit({ simulate: "large-transformer", seed: 12, speed: 0.5 });
  await server.waitFor(b.id, (r) => r.status === "running");
  const page = await openPage(browser);
  const estimate = { remaining: { p10: 250, p50: 300, p90: 340 }, based_on: { builds: 7, match: "exact" }, longer_than_history: false, t: 0 };
  await page.route((url) => url.pathname === "/builds" && url.searchParams.has("limit"), async (route) => {
    const response = await route.fetch();
    const page = await response.json();
    for (const r of page.builds) if (r.id === b.id) r.estimate = estimate;
    await route.fulfill({ response, json: page });
  });
  await page.goto(server.url + "/");
  const row = page.locator(`tr[data-id="${b.id}"]`);
  await row.locator(".eta").filter({ hasText: /^about 4–6 min left$/ }).waitFor();

  await withRecordFields(page, b.id, { estimate: { remaining: null, based_on: { builds: 2, match: "exact" }, longer_than_history: false, t: 1 } });
  await page.goto(`${server.url}/ui/builds/${b.id}`);
  await page.locator(".eta-line").filter({ hasText: "no ETA: 2 earlier builds of this model and GPU (3 needed)" }).waitFor();
  assert.equal(await page.locator(".eta-line").getAttribute("data-kind"), "none");
  await server.api("POST", `/builds/${b.id}/cancel`);
  assertNoErrors(page);
  await closePage(page);
});

test("a finished build charts its key's earlier builds, itself ringed, and compares itself with them", { timeout: 90000 }, async () => {
  const b = await server.submit({ simulate: "small-cnn", speed: 8 });
  await server.waitFor(b.id, (r) => r.status === "succeeded");
  const page = await openPage(browser);
  await offerHistory(page);
  await withRecordFields(page, b.id, { history_key: KEY });
  const entry = (build, finished_at, elapsed, status = "succeeded") =>
    ({ build, key: KEY, model: "small-cnn", backend: "simulated", finished_at, elapsed, status, error: null, families: [] });
  const entries = [entry(b.id, 5000, 9.5), entry("b_4", 4000, 10.2), entry("b_3", 3000, 3.1, "failed"),
    entry("b_2", 2000, 9.9), entry("b_1", 1000, 10.4)];
  const queries = [];
  await page.route((url) => url.pathname === "/history", (route) => {
    queries.push(new URL(route.request().url()).searchParams.get("key"));
    return route.fulfill({ json: { builds: entries } });
  });
  await page.route((url) => url.pathname === `/builds/${b.id}/compare`, (route) => route.fulfill({ json: {
    before: "the median of 3 builds", after: b.id, before_elapsed: 10.2, after_elapsed: 9.5,
    families: [{ family: "Building engine", before: 6.0, after: 5.2 }, { family: "Parsing", before: 1.0, after: 1.1 }],
    verdict: `${b.id} was 7 % faster than the median of 3 builds (9.5s vs 10.2s); most of it in Building engine (-0.8s)` } }));
  await page.goto(`${server.url}/ui/builds/${b.id}`);
  const chart = page.locator("svg.history-chart");
  await chart.waitFor();
  assert.equal(await chart.getAttribute("data-points"), "5");
  assert.equal(await chart.locator(".pt").count(), 5);
  assert.equal(await chart.locator(".pt.failed").count(), 1, "the failed build is drawn apart");
  assert.equal(await chart.locator(".pt.this").getAttribute("data-build"), b.id, "this build is marked");
  assert.deepEqual(queries.filter(Boolean).slice(0, 1), [KEY], "the history of this build's key");
  await page.getByText("4 earlier builds of this key (3 succeeded)").waitFor();
  const verdict = page.locator(".compare .verdict");
  await verdict.waitFor();
  assert.match(await verdict.textContent(), /was 7 % faster than the median of 3 builds \(9.5s vs 10.2s\)/);
  const rows = page.locator(".compare-table tbody tr");
  assert.equal(await rows.count(), 3);
  assert.deepEqual(await rows.nth(1).locator("td").allTextContents(), ["Building engine", "6.0 s", "5.2 s", "-0.8 s (-13 %)"]);
  shots.push(await screenshot(page, "build-history"));
  assertNoErrors(page);
  await closePage(page);
});

test("without history or a comparison the build page says why, in a sentence", { timeout: 60000 }, async () => {
  const b = await server.submit({ simulate: "small-cnn", speed: 8 });
  await server.waitFor(b.id, (r) => r.status === "succeeded");
  const page = await openPage(browser);
  await offerHistory(page);
  let entries = [];
  let compared = 0;
  await withRecordFields(page, b.id, { history_key: KEY });
  await page.route((url) => url.pathname === "/history", (route) => route.fulfill({ json: { builds: entries } }));
  await page.route((url) => url.pathname === `/builds/${b.id}/compare`, (route) => {
    compared++;
    return route.fulfill({ status: 409, json: { error: "no earlier successful build of this key to compare with" } });
  });
  // The first build of its key: nothing to chart, nothing to ask to compare.
  entries = [{ build: b.id, key: KEY, model: "small-cnn", backend: "simulated", finished_at: 1000, elapsed: 1, status: "succeeded", error: null, families: [] }];
  await page.goto(`${server.url}/ui/builds/${b.id}`);
  await page.getByText("No comparison: no other successful build of this key yet.").waitFor();
  assert.equal(compared, 0);
  assert.equal(await page.locator("svg.history-chart").getAttribute("data-points"), "1");
  // The server's refusal (409), in its words.
  entries = [...entries, { ...entries[0], build: "b_earlier", finished_at: 500 }];
  await page.reload();
  await page.getByText("No comparison: no earlier successful build of this key to compare with.").waitFor();
  assert.equal(compared, 1);
  // A server without a history: no panel, and no requests that fail.
  const other = await openPage(browser);
  await other.route((url) => url.pathname === "/openapi.json", async (route) => {
    const response = await route.fetch();
    const doc = await response.json();
    delete doc.paths["/history"];
    await route.fulfill({ response, json: doc });
  });
  await other.goto(`${server.url}/ui/builds/${b.id}`);
  await other.locator("main[data-final=true]").waitFor();
  assert.equal(await other.locator("section.history").isHidden(), true);
  assertNoErrors(page, [/409/]);
  assertNoErrors(other);
  await closePage(other);
  await closePage(page);
});

test("the model filter narrows the list through GET /builds?model=, and a reload keeps it", { timeout: 90000 }, async () => {
  const cnn = await server.submit({ simulate: "small-cnn", speed: 8 });
  const failing = await server.submit({ simulate: "failing", speed: 8 });
  await server.waitFor(cnn.id, (r) => r.status === "succeeded");
  await server.waitFor(failing.id, (r) => r.status === "failed");
  const page = await openPage(browser);
  // The contract's filter (a substring of the model, or of a simulated build's profile).
  const asked = [];
  await page.route((url) => url.pathname === "/builds" && url.searchParams.has("limit"), async (route) => {
    const url = new URL(route.request().url());
    const model = url.searchParams.get("model");
    asked.push(model);
    url.searchParams.delete("model");
    const response = await route.fetch({ url: url.toString() });
    const list = await response.json();
    if (model) list.builds = list.builds.filter((r) => ((r.request && r.request.simulate) || r.model || "").includes(model));
    await route.fulfill({ response, json: list });
  });
  await page.goto(server.url + "/");
  await page.locator(`tr[data-id="${failing.id}"]`).waitFor();
  await page.getByRole("searchbox", { name: "Filter builds by model" }).fill("small-c");
  await page.waitForURL((url) => url.searchParams.get("model") === "small-c");
  await page.locator(`tr[data-id="${failing.id}"]`).waitFor({ state: "detached" });
  await page.locator(`tr[data-id="${cnn.id}"]`).waitFor();
  await page.reload();
  await page.locator(`tr[data-id="${cnn.id}"]`).waitFor();
  assert.equal(await page.getByRole("searchbox", { name: "Filter builds by model" }).inputValue(), "small-c");
  assert.equal(await page.locator(`tr[data-id="${failing.id}"]`).count(), 0);
  assert.equal(asked[asked.length - 1], "small-c");
  await page.getByRole("searchbox", { name: "Filter builds by model" }).fill("no-such-model");
  await page.getByText("No builds of a model matching “no-such-model”.").waitFor();
  assertNoErrors(page);
  await closePage(page);
});

test("a build group is one row that opens into its members, with the manifest, engines and a group cancel", { timeout: 60000 }, async () => {
  const gid = "g_" + "1".repeat(32);
  const created = new Date().toISOString();
  const member = (n, target, status) => ({ id: `b_${String(n).repeat(32)}`, status, created_at: created, started_at: created,
    finished_at: status === "succeeded" ? created : null, model: "/models/resnet50.onnx", backend: "tensorrt",
    request: { model: "/models/resnet50.onnx" }, group: { id: gid, target }, phase: null, error: null, estimate: null });
  const members = [member(2, "h200", "succeeded"), member(3, "a100", "running"), member(4, "l4", "queued")];
  const doc = { id: gid, created_at: created, state: "running", model: "/models/resnet50.onnx", targets: ["h200", "a100", "l4"],
    members: [
      { target: "h200", build: members[0].id, state: "succeeded", compute_capability: "9.0", engine_name: "resnet50.h200.sm90.engine" },
      { target: "a100", build: members[1].id, state: "running", compute_capability: null, engine_name: null },
      { target: "l4", build: members[2].id, state: "queued", compute_capability: null, engine_name: null }],
    manifest: null };
  const page = await openPage(browser);
  let cancelled = 0;
  await page.route((url) => url.pathname === "/builds", (route) => route.fulfill({ json: { builds: members, next_cursor: null } }));
  await page.route((url) => url.pathname === `/groups/${gid}`, (route) => route.fulfill({ json: doc }));
  await page.route((url) => url.pathname === `/groups/${gid}/cancel`, (route) => {
    cancelled++;
    return route.fulfill({ status: 202, json: { ...doc, state: "cancelling" } });
  });
  await page.goto(server.url + "/");
  const groupRow = page.locator(`tr.group-row[data-group="${gid}"]`);
  await groupRow.waitFor();
  assert.equal(await page.locator("table.builds tbody tr").count(), 1, "one row for the whole group");
  await groupRow.locator(".activity").filter({ hasText: "h200 succeeded · a100 running · l4 queued" }).waitFor();
  assert.match(await groupRow.textContent(), /targets: h200, a100, l4/);
  assert.match(await groupRow.textContent(), /1\/3 ended/);
  const toggle = groupRow.getByRole("button", { name: new RegExp(`Group ${gid}`) });
  assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  await toggle.click();
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  await page.locator("tr.member").nth(2).waitFor();
  assert.match(await page.locator("tr.member").nth(1).textContent(), /target a100/);
  assert.deepEqual(await page.locator("tr.member").evaluateAll((trs) => trs.map((tr) => tr.dataset.id)), members.map((m) => m.id),
    "the members in target order, right under the group");
  const engine = page.getByRole("link", { name: "h200: resnet50.h200.sm90.engine" });
  assert.equal(await engine.getAttribute("href"), `/groups/${gid}/engines/resnet50.h200.sm90.engine`);
  await page.getByText("The Triton manifest is ready once every member has ended.").waitFor();
  shots.push(await screenshot(page, "list-group-open"));
  // Cancel, with the build cancel's confirmation: Keep running first, then cancel.
  await groupRow.getByRole("button", { name: `Cancel group ${gid}` }).click();
  await page.getByRole("heading", { name: "Cancel group?" }).waitFor();
  await page.getByRole("button", { name: "Keep running" }).click();
  assert.equal(cancelled, 0);
  await groupRow.getByRole("button", { name: `Cancel group ${gid}` }).click();
  await page.getByRole("button", { name: `Cancel group ${gid}` }).last().click();
  await groupRow.locator('.badge[data-status="cancelling"]').waitFor();
  assert.equal(cancelled, 1);
  // Closed again: only the group's row.
  await toggle.click();
  await page.locator("tr.member").first().waitFor({ state: "detached" });
  // Once every member ended: the manifest.
  doc.state = "succeeded";
  doc.members = doc.members.map((m, i) => ({ ...m, state: "succeeded", compute_capability: ["9.0", "8.0", "8.9"][i],
    engine_name: `resnet50.${m.target}.sm${["90", "80", "89"][i]}.engine` }));
  doc.manifest = { cc_model_filenames: { "9.0": "resnet50.h200.sm90.engine", "8.0": "resnet50.a100.sm80.engine", "8.9": "resnet50.l4.sm89.engine" } };
  members.forEach((m) => { m.status = "succeeded"; m.finished_at = created; });
  await page.reload();
  await page.locator(`tr.group-row[data-group="${gid}"] .badge[data-status="succeeded"]`).waitFor();
  await page.locator(`tr.group-row[data-group="${gid}"]`).getByRole("button", { name: new RegExp(`Group ${gid}`) }).click();
  const manifest = page.getByRole("link", { name: "Triton manifest (cc_model_filenames)" });
  assert.equal(await manifest.getAttribute("href"), `/groups/${gid}/manifest`);
  assert.equal(await page.locator("tr.group-panel a.engine").count(), 3);
  assertNoErrors(page);
  await closePage(page);
});
