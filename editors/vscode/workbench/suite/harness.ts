// What the workbench suite's tests share: the run's configuration (from the driver,
// through code-server's environment), the driver's browser actions, polling, and a
// small sequential runner that reports through the driver (the extension host's own
// console is not the terminal's).

export interface WorkbenchConfig {
  driver: string;     // the driver's loopback URL (workbench/driver.mjs)
  bin: string;        // the real trtwatch binary
  service: { url: string; token: string };  // a real `trtwatch serve` that wants the token
  workspace: string;  // the folder the workbench opened
  history: string;    // the build history of the run (TRTWATCH_HISTORY of the extension's builds)
  tensorrtDouble: string | null;  // trtwatch on the TensorRT test double, when the build has it
}

export const config: WorkbenchConfig = JSON.parse(process.env.TRTWATCH_WORKBENCH ?? 'null') ??
  (() => { throw new Error('TRTWATCH_WORKBENCH is not set: run the suite through scripts/workbench-test.sh'); })();

async function call<T>(route: string, body: object): Promise<T> {
  const res = await fetch(`${config.driver}/${route}`, { method: 'POST', body: JSON.stringify(body) });
  const out = await res.json() as T & { error?: string };
  if (!res.ok) throw new Error(`driver ${route}: ${out.error}`);
  return out;
}

// The browser side of the workbench, as the user has it.
export const browser = {
  log: (line: string) => call('log', { line }),
  screenshot: (name: string) => call<{ path: string }>('screenshot', { name }).then((r) => r.path),
  saveHtml: (name: string) => call<{ path: string }>('html', { name }).then((r) => r.path),
  // Runs `fn` (self-contained: no closure) in the workbench page.
  evaluate: <A, R>(fn: (arg: A) => R, arg: A) => call<{ value: R }>('eval', { fn: fn.toString(), arg }).then((r) => r.value),
  click: (selector: string, hover?: string) => call('click', { selector, hover }),
  hover: (selector: string) => call('hover', { selector }),
  type: (text: string) => call('type', { text }),
  press: (key: string) => call('press', { key }),
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Polls `probe` until it returns something other than undefined/false.
export async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>,
                               timeoutMs = 20000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${String(last)})` : ''}`);
    await sleep(100);
  }
}

export interface Test {
  name: string;
  timeoutMs?: number;
  skip?: () => string | undefined;  // why this run cannot do the test (said, and counted)
  fn: () => Promise<void>;
}

async function runOne(t: Test): Promise<string | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = t.timeoutMs ?? 60000;
  try {
    await Promise.race([t.fn(), new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${limit} ms`)), limit); })]);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.stack ?? e.message : String(e);
  } finally {
    clearTimeout(timer);
  }
}

// Runs the tests in order; throws (the run's exit code 1) when any failed.
// TRTWATCH_WORKBENCH_ONLY=REGEX runs only the tests whose names match (while developing).
// `afterEach` puts the workbench back (a failed test may leave a build running).
export async function runSuite(all: Test[], afterEach: () => Promise<void>): Promise<void> {
  const only = process.env.TRTWATCH_WORKBENCH_ONLY;
  const tests = only ? all.filter((t) => new RegExp(only).test(t.name)) : all;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const t of tests) {
    const why = t.skip?.();
    if (why) {
      skipped++;
      await browser.log(`- ${t.name} (skipped: ${why})`);
      continue;
    }
    const start = Date.now();
    const error = await runOne(t);
    await afterEach().catch((e) => browser.log(`after "${t.name}": ${String(e)}`));
    const ms = Date.now() - start;
    if (error === undefined) {
      passed++;
      await browser.log(`\u2714 ${t.name} (${ms} ms)`);
    } else {
      failed++;
      await browser.log(`\u2716 ${t.name} (${ms} ms)\n${error}`);
      const name = `failed-${t.name.replace(/[^\w]+/g, '-').slice(0, 60)}`;
      await browser.screenshot(name).catch(() => undefined);
      await browser.saveHtml(name).catch(() => undefined);
    }
  }
  await browser.log(`workbench: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  if (failed > 0) throw new Error(`${failed} workbench tests failed`);
}
