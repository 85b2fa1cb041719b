// Watching a finished 7,500-event build again: the final state shown in full, with the
// time from opening its page and the long tasks (PerformanceObserver "longtask")
// measured and printed against the goals (300 ms, no task over 50 ms); asserted with
// TRTWATCH_ASSERT_TIMING=1.
// ctest runs this file alone (RUN_SERIAL): it measures time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openPage, sleep, closePage, serverAndBrowserPerFile } from "./harness.mjs";

let server;
let browser;
serverAndBrowserPerFile((s, b) => { server = s; browser = b; });

test("a 7,500-event build replays in full, its time and long tasks measured", { timeout: 120000 }, async (t) => {
  // Seed 5 at speed 40: about 8,000 stored events (faster speeds coalesce more steps).
  // Without the service's timing cache: a cached tactic is neither timed nor reported.
  const b = await server.submit({ simulate: "large-transformer", seed: 5, speed: 40, timing_cache: false });
  const record = await server.waitFor(b.id, (r) => r.status === "succeeded", 90000);
  const runs = [];
  for (let i = 0; i < 5; ++i) {
    const page = await openPage(browser);
    await page.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
        .observe({ type: "longtask", buffered: true });
    });
    await page.goto(`${server.url}/ui/builds/${b.id}`);
    await page.locator("main[data-final=true]").waitFor();
    await sleep(200);  // let a long task that ended the replay be reported
    const run = await page.evaluate(() => ({
      replayMs: performance.getEntriesByName("trtwatch:replay")[0].duration,
      fromNavigationMs: performance.getEntriesByName("trtwatch:final-shown")[0].startTime,
      longTasks: window.__longTasks,
      lastSeq: Number(document.querySelector("main").dataset.lastSeq),
      events: Number(document.querySelector("main").dataset.events),
    }));
    assert.equal(run.lastSeq, record.events, "the stream was followed to its last event");
    runs.push(run);
    assert.deepEqual(page.unexpectedErrors(), [], "console errors or exceptions on the page");
    await closePage(page);
  }
  console.log(`replay of ${runs[0].events} events: ${runs.map((r) => `${r.replayMs.toFixed(0)} ms ` +
    `(from navigation ${r.fromNavigationMs.toFixed(0)} ms, long tasks [${r.longTasks.map((d) => d.toFixed(0))}])`).join("; ")}`);
  if (process.env.TRTWATCH_SANITIZE) {
    t.skip(`timing not reported under the ${process.env.TRTWATCH_SANITIZE} sanitizer (the server replays several times slower)`);
    return;
  }
  // The worker coalesces steps when its output lags, so a slower (sanitized) worker stores fewer.
  assert.ok(runs[0].events >= 7500, `a replay of 7,500 events or more (${runs[0].events})`);
  // The best of five runs: the browser and the server share two cores with the rest of CI.
  // Timing is a measurement, printed above; it is asserted only where asked for
  // (TRTWATCH_ASSERT_TIMING=1, on a machine of known speed), never as a flaky gate.
  const best = runs.reduce((a, r) => (r.replayMs < a.replayMs ? r : a));
  console.log(`best replay: ${best.replayMs.toFixed(0)} ms (goal < 300 ms), longest task ` +
    `${Math.max(0, ...best.longTasks).toFixed(0)} ms (goal <= 50 ms)`);
  if (process.env.TRTWATCH_ASSERT_TIMING === "1") {
    assert.ok(best.replayMs < 300, `replay shown in ${best.replayMs} ms`);
    assert.ok(Math.max(0, ...best.longTasks) <= 50, `long tasks: ${best.longTasks}`);
  }
});
