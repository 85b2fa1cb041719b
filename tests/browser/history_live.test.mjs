// The build history and build groups end to end in headless Chromium: a real
// `trtwatch serve` keeps the history of its builds in its record store, its workers give
// ETAs from it, it runs one build per target of a group, and the dashboard shows them —
// no answer intercepted. (history.test.mjs fixes the answers to check the views word
// for word.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server, openPage, screenshot, removeDir, closePage, serverAndBrowserPerFile } from "./harness.mjs";

let server;
let browser;
const shots = [];

serverAndBrowserPerFile((s, b) => { server = s; browser = b; }, { shots });

const PROFILE = { simulate: "small-cnn", speed: 2 };  // one build key: the profile and the speed
const done = (r) => ["succeeded", "failed", "cancelled", "timed_out", "interrupted"].includes(r.status);


test("no ETA before 3 earlier builds; a fifth build shows the range, and its page charts and compares the key's builds", { timeout: 240000 }, async () => {
  const page = await openPage(browser);
  // The first build of the key says plainly that there is no ETA.
  const first = await server.submit({ ...PROFILE, seed: 1 });
  await page.goto(`${server.url}/ui/builds/${first.id}`);
  await page.locator(".eta-line").filter({ hasText: "no ETA: 0 earlier builds of this model and GPU (3 needed)" }).waitFor();
  await page.locator("main[data-final=true]").waitFor({ timeout: 60000 });
  for (const seed of [2, 3, 4]) await server.waitFor((await server.submit({ ...PROFILE, seed })).id, done, 60000);
  // The fifth: a range from the 4 before it.
  const fifth = await server.submit({ ...PROFILE, seed: 5 });
  await page.goto(`${server.url}/ui/builds/${fifth.id}`);
  await page.locator(".eta-line").filter({ hasText: /^about \d+–\d+ s left, (from|longer than any of the) 4 earlier builds$/ }).waitFor();
  shots.push(await screenshot(page, "live-build-eta"));
  await page.locator("main[data-final=true]").waitFor({ timeout: 60000 });
  const record = await server.waitFor(fifth.id, done);
  assert.match(record.history_key, /^[0-9a-f]{64}$/);
  // Its page: the five builds charted, this one ringed, and the verdict against the other four.
  await page.reload();
  const chart = page.locator("svg.history-chart");
  await page.waitForFunction(() => document.querySelector("svg.history-chart")?.dataset.points === "5", null, { timeout: 30000 });
  assert.equal(await chart.locator(".pt.this").getAttribute("data-build"), fifth.id);
  const verdict = page.locator(".compare .verdict");
  await verdict.waitFor();
  assert.match(await verdict.textContent(), new RegExp(`^${fifth.id} (was \\d+ ?% (slower|faster) than|took about as long as) `));
  assert.ok(await page.locator(".compare-table tbody tr").count() >= 2, "the whole build and its phase families");
  shots.push(await screenshot(page, "live-build-history"));
  assert.deepEqual(page.unexpectedErrors(), []);
  await closePage(page);
});

test("the model filter narrows the list on the server, and a reload keeps it", { timeout: 120000 }, async () => {
  const cnn = await server.submit({ simulate: "small-cnn", speed: 8 });
  const failing = await server.submit({ simulate: "failing", speed: 8 });
  await server.waitFor(cnn.id, done);
  await server.waitFor(failing.id, done);
  const page = await openPage(browser);
  await page.goto(server.url + "/");
  await page.locator(`tr[data-id="${failing.id}"]`).waitFor();
  await page.getByRole("searchbox", { name: "Filter builds by model" }).fill("failing");
  await page.waitForURL((url) => url.searchParams.get("model") === "failing");
  await page.locator(`tr[data-id="${cnn.id}"]`).waitFor({ state: "detached" });
  await page.locator(`tr[data-id="${failing.id}"]`).waitFor();
  await page.reload();
  await page.locator(`tr[data-id="${failing.id}"]`).waitFor();
  assert.equal(await page.locator(`tr[data-id="${cnn.id}"]`).count(), 0);
  assert.ok(await page.locator("table.builds tbody tr").evaluateAll((trs) => trs.every((tr) => /failing/.test(tr.textContent))));
  assert.deepEqual(page.unexpectedErrors(), []);
  await closePage(page);
});

test("a build group from the API is one row in the list that opens into its members", { timeout: 120000 }, async (t) => {
  if (!process.env.TRTWATCH_FAKE_DRIVER_DIR) { t.skip("needs the CUDA driver stand-in (TRTWATCH_FAKE_DRIVER_DIR)"); return; }
  // The CUDA driver stand-in shows "Fake GPU H" (9.0) and "Fake GPU A" (8.0): both targets run here.
  const gpus = new Server({ args: ["--gpu-type", "h200=gres:h200,cc=9.0", "--gpu-type", "a100=gres:a100,cc=8.0"],
    env: { LD_LIBRARY_PATH: process.env.TRTWATCH_FAKE_DRIVER_DIR } });
  await gpus.start();
  try {
    const answer = await gpus.api("POST", "/builds", { simulate: "small-cnn", speed: 2, targets: ["h200", "a100"] });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const gid = answer.body.id;
    const page = await openPage(browser);
    await page.goto(gpus.url + "/");
    const groupRow = page.locator(`tr.group-row[data-group="${gid}"]`);
    await groupRow.waitFor();
    assert.equal(await page.locator("table.builds tbody tr").count(), 1, "one row for the group's two builds");
    await groupRow.filter({ hasText: "targets: h200, a100" }).waitFor();  // from the group document
    await groupRow.getByRole("button", { name: new RegExp(`Group ${gid}`) }).click();
    await page.locator("tr.member").nth(1).waitFor();
    assert.deepEqual(await page.locator("tr.member").evaluateAll((trs) => trs.map((tr) => /target (\w+)/.exec(tr.textContent)[1])),
      ["h200", "a100"]);
    await groupRow.locator('.badge[data-status="succeeded"]').waitFor({ timeout: 60000 });
    await groupRow.getByText("2/2 ended").waitFor();
    const manifest = page.getByRole("link", { name: "Triton manifest (cc_model_filenames)" });
    await manifest.waitFor();
    assert.equal(await manifest.getAttribute("href"), `/groups/${gid}/manifest`);
    shots.push(await screenshot(page, "live-list-group"));
    // A member's page names its group and target.
    await page.locator("tr.member a.build-link").first().click();
    await page.locator('[data-fact="group"]').filter({ hasText: `${gid}, target h200` }).waitFor();
    assert.deepEqual(page.unexpectedErrors(), []);
    await closePage(page);
  } finally {
    await gpus.stopCleanly();
    removeDir(gpus.dataDir);
  }
});
