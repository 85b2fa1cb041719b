// Runs the workbench suite (out/workbench/suite/index.js) inside a real VS Code:
// code-server on a loopback port with the extension installed from its .vsix, Debian's
// Chromium (playwright-core) opening it with the smoke-test driver's payload, a real
// `trtwatch serve` with a token for remote mode. The suite runs in the extension host and
// asks this process, over a loopback HTTP "driver" port, for what only the browser can do:
// screenshots, reading the workbench's DOM, clicks and keys. Builds keep their history in
// a folder of the run's own (TRTWATCH_HISTORY); real TensorRT builds run on the TensorRT
// test double built next to the binary (tests/trtwatch_on_tensorrt_double), when it is there. Everything started here is
// stopped on exit, and the whole run is bounded (WORKBENCH_TIMEOUT_S, default 300).
//   node workbench/driver.mjs --code-server EXE --node-bin DIR --vsix FILE --bin TRTWATCH --screenshots DIR
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const { values: opt } = parseArgs({ options: {
  "code-server": { type: "string" }, "node-bin": { type: "string" }, vsix: { type: "string" },
  bin: { type: "string" }, screenshots: { type: "string" },
} });
for (const k of ["code-server", "node-bin", "vsix", "bin", "screenshots"]) {
  if (!opt[k]) { console.error(`workbench driver: --${k} is required`); process.exit(2); }
}
const CHROMIUM = process.env.TRTWATCH_CHROMIUM || "/usr/bin/chromium";
const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-dev-shm-usage"];
const TIMEOUT_S = Number(process.env.WORKBENCH_TIMEOUT_S || 300);
const SUITE = resolve(here, "..", "out", "workbench", "suite", "index.js");
const shots = resolve(opt.screenshots);
const tmp = mkdtempSync(join(tmpdir(), "trtwatch-workbench-"));
const children = [];  // { name, proc, group }
let browser;

const log = (line) => console.log(`workbench: ${line}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// HOME and XDG_* in the temporary folder: code-server writes ~/.config/code-server otherwise.
// The build history too (the builds the extension runs inherit it), so the tests start
// from none and the user's stays untouched.
function environment() {
  const home = join(tmp, "home");
  for (const d of ["config", "data", "cache"]) mkdirSync(join(home, d), { recursive: true });
  return { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "config"), XDG_DATA_HOME: join(home, "data"),
           XDG_CACHE_HOME: join(home, "cache"), PATH: `${resolve(opt["node-bin"])}:${process.env.PATH}`,
           TRTWATCH_HISTORY: join(tmp, "history") };
}

// trtwatch on the TensorRT test double (its stand-in TensorRT and driver libraries write
// engine bytes and name a GPU), as one executable the extension can be pointed at: a
// script that puts the stand-ins on LD_LIBRARY_PATH. null when the build has no double
// (TRTWATCH_TENSORRT_DOUBLE_TESTS=OFF). The same variables as ctest's override the paths.
function tensorrtDouble() {
  const build = dirname(resolve(opt.bin));
  const bin = process.env.TRTWATCH_DOUBLE_BIN || join(build, "tests", "trtwatch_on_tensorrt_double");
  const libs = [process.env.TRTWATCH_FAKE_TENSORRT_DIR || join(build, "fake_tensorrt", "10"),
                process.env.TRTWATCH_FAKE_DRIVER_DIR || join(build, "fake_driver")];
  if (![bin, ...libs].every((p) => existsSync(p))) return null;
  const script = join(tmp, "trtwatch-on-tensorrt-double");
  const quote = (p) => `'${p.replace(/'/g, "'\\''")}'`;
  writeFileSync(script, `#!/bin/sh\nLD_LIBRARY_PATH=${quote(libs.join(":"))} exec ${quote(bin)} "$@"\n`, { mode: 0o755 });
  return script;
}

function start(name, cmd, args, env) {
  // Its own process group, so that whatever it starts goes with it.
  const proc = spawn(cmd, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  proc.output = "";
  const keep = (b) => { proc.output = (proc.output + b).slice(-20000); };
  proc.stdout.on("data", keep);
  proc.stderr.on("data", keep);
  children.push({ name, proc });
  return proc;
}

function until(what, poll, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  return (async () => {
    for (;;) {
      const v = await poll();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  })();
}

// A real `trtwatch serve` on 127.0.0.1:0 that wants a bearer token.
async function startService() {
  const token = randomBytes(16).toString("hex");
  const tokenFile = join(tmp, "token");
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const proc = start("trtwatch serve", opt.bin, ["serve", "--listen", "127.0.0.1:0", "--data-dir", join(tmp, "serve"),
    "--token-file", tokenFile], process.env);
  const url = await until("trtwatch serve to listen", () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.output)?.[1]);
  return { url, token };
}

// The workspace the workbench opens: a model that is not one (a build of it fails), and
// a task that builds it.
function makeWorkspace() {
  const ws = join(tmp, "workspace");
  mkdirSync(join(ws, "models"), { recursive: true });
  writeFileSync(join(ws, "models", "broken.onnx"), "not an ONNX model\n");
  mkdirSync(join(ws, ".vscode"));
  writeFileSync(join(ws, ".vscode", "tasks.json"), JSON.stringify({ version: "2.0.0", tasks: [
    { type: "trtwatch", label: "engine: broken", model: "models/broken.onnx", problemMatcher: "$trtwatch" },
  ] }, null, 2));
  return ws;
}

function userSettings(userData) {
  mkdirSync(join(userData, "User"), { recursive: true });
  writeFileSync(join(userData, "User", "settings.json"), JSON.stringify({
    "trtwatch.binaryPath": resolve(opt.bin),
    "workbench.startupEditor": "none", "workbench.tips.enabled": false, "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": false, "extensions.autoCheckUpdates": false, "update.mode": "none",
    "workbench.enableExperiments": false, "chat.disableAIFeatures": true, "window.commandCenter": false,
  }, null, 2));
}

// Installs the .vsix like a user would; returns the folder it was unpacked into.
function installExtension(env, userData, extensions) {
  const r = spawnSync(opt["code-server"], ["--user-data-dir", userData, "--extensions-dir", extensions,
    "--install-extension", resolve(opt.vsix)], { env, encoding: "utf8", timeout: 120000 });
  if (r.status !== 0) throw new Error(`--install-extension failed (${r.status}):\n${r.stdout}${r.stderr}`);
  const dir = readdirSync(extensions).find((d) => d.startsWith("trtwatch.trtwatch-vscode-"));
  if (!dir) throw new Error(`the extension is not in ${extensions} after --install-extension`);
  log(`installed ${dir}`);
  return join(extensions, dir);
}

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

async function startCodeServer(env, userData, extensions, ws) {
  const port = await freePort();
  const proc = start("code-server", opt["code-server"], ["--auth", "none", "--bind-addr", `127.0.0.1:${port}`,
    "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
    "--user-data-dir", userData, "--extensions-dir", extensions, "--vscode-option", "enable-smoke-test-driver", ws], env);
  const base = `http://127.0.0.1:${port}`;
  await until("code-server to answer", async () => {
    if (proc.exitCode !== null) throw new Error(`code-server exited ${proc.exitCode}:\n${proc.output}`);
    return fetch(`${base}/healthz`).then((r) => r.ok, () => false);
  });
  return base;
}

// What the suite asks for (POST /NAME with a JSON body); the page is the workbench.
function driverRoutes(page) {
  return {
    log: async ({ line }) => { console.log(line); },
    screenshot: async ({ name }) => {
      const path = join(shots, `${name}.png`);
      await page.screenshot({ path });
      return { path };
    },
    // The workbench's DOM, kept beside the screenshots when a test fails.
    html: async ({ name }) => {
      const path = join(shots, `${name}.html`);
      writeFileSync(path, await page.content());
      return { path };
    },
    // `fn`: the source of a function of one argument, run in the page.
    eval: async ({ fn, arg }) => ({ value: await page.evaluate(({ fn, arg }) => (0, eval)(`(${fn})`)(arg), { fn, arg }) }),
    click: async ({ selector, hover }) => {
      if (hover) await page.locator(hover).first().hover();
      await page.locator(selector).first().click({ timeout: 10000 });
    },
    hover: async ({ selector }) => page.locator(selector).first().hover({ timeout: 10000 }),
    type: async ({ text }) => page.keyboard.type(text),
    press: async ({ key }) => page.keyboard.press(key),
  };
}

async function startDriver(page) {
  const routes = driverRoutes(page);
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const route = routes[req.url.slice(1)];
    try {
      if (!route) throw new Error(`no route ${req.url}`);
      const out = (await route(JSON.parse(body || "{}"))) ?? {};
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(out));
    } catch (e) {
      res.writeHead(500, { "Content-Type": "application/json" }).end(JSON.stringify({ error: String(e?.message ?? e) }));
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

function payloadUrl(base, ws, extensionDir) {
  const remote = (p) => `vscode-remote://${new URL(base).host}${p}`;
  const payload = [["extensionDevelopmentPath", remote(extensionDir)], ["extensionTestsPath", remote(SUITE)],
    ["skipWelcome", "true"], ["skipReleaseNotes", "true"]];
  return `${base}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

async function run() {
  mkdirSync(shots, { recursive: true });
  const env = environment();
  const userData = join(tmp, "user-data");
  const extensions = join(tmp, "extensions");
  const ws = makeWorkspace();
  userSettings(userData);
  const extensionDir = installExtension(env, userData, extensions);
  const service = await startService();

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  const exited = new Promise((r) => page.exposeFunction("codeAutomationExit", (code) => { r(code); }));
  const driver = await startDriver(page);
  // The extension host inherits code-server's environment: the suite's configuration.
  env.TRTWATCH_WORKBENCH = JSON.stringify({ driver: driver.url, bin: resolve(opt.bin), service, workspace: ws,
    history: env.TRTWATCH_HISTORY, tensorrtDouble: tensorrtDouble() });
  const base = await startCodeServer(env, userData, extensions, ws);
  log(`code-server ${base}, trtwatch serve ${service.url}`);
  const started = Date.now();
  await page.goto(payloadUrl(base, ws, extensionDir));
  const code = await exited;
  log(`the suite ended with ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  driver.server.close();
  return code;
}

async function stopAll() {
  await browser?.close().catch(() => {});
  for (const { proc } of children.reverse()) {
    if (proc.exitCode !== null || proc.signalCode !== null) continue;
    try { process.kill(-proc.pid, "SIGTERM"); } catch { /* gone */ }
    const gone = new Promise((r) => proc.once("exit", r));
    if (await Promise.race([gone.then(() => true), sleep(5000)]) !== true) {
      try { process.kill(-proc.pid, "SIGKILL"); } catch { /* gone */ }
    }
  }
  if (process.env.WORKBENCH_KEEP) log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}

let stopping;
async function end(code, why) {
  if (why) console.error(`workbench: ${why}`);
  stopping ??= stopAll();
  await stopping;
  process.exit(code);
}
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => end(130, `stopped by ${sig}`));
setTimeout(() => {
  for (const { name, proc } of children) console.error(`--- ${name} (last output)\n${proc.output.slice(-3000)}`);
  end(124, `the run took more than ${TIMEOUT_S} s`);
}, TIMEOUT_S * 1000).unref();

run().then((code) => end(code), (e) => end(1, e.stack ?? String(e)));
