// What the dashboard tests share: a real `trtwatch serve` (TRTWATCH_BIN) on a loopback
// port, Debian's Chromium driven by playwright-core (never a downloaded browser), a
// JSON client for the API, and a per-page record of console errors.
import { spawn } from "node:child_process";
import { after, before } from "node:test";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const BIN = process.env.TRTWATCH_BIN;
export const CHROMIUM = process.env.TRTWATCH_CHROMIUM || "/usr/bin/chromium";
export const SCREENSHOTS = process.env.TRTWATCH_SCREENSHOT_DIR || join(tmpdir(), "trtwatch-screenshots");
// Chromium as root needs --no-sandbox; the rest keeps it off the network and quiet.
const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-dev-shm-usage"];

export function tempDir(prefix) { return mkdtempSync(join(tmpdir(), `trtwatch-${prefix}-`)); }

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// `trtwatch serve` on 127.0.0.1:port (0: any), resolved once it says where it listens.
export class Server {
  // `bin`/`env`: another trtwatch binary (the TensorRT double's) and its environment.
  constructor({ dataDir = tempDir("data"), port = 0, args = [], bin = BIN, env = {} } = {}) {
    Object.assign(this, { dataDir, port, args, bin, env, log: "" });
  }
  async start() {
    this.log = "";
    this.proc = spawn(this.bin, ["serve", "--listen", `127.0.0.1:${this.port}`, "--data-dir", this.dataDir, ...this.args],
      { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...this.env } });
    this.exited = new Promise((resolve) => this.proc.once("exit", (code, signal) => resolve({ code, signal })));
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${this.log}`)), 30000);
      this.proc.stderr.on("data", (chunk) => {
        this.log += chunk;
        const m = this.log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
        if (m) { clearTimeout(timer); this.port = Number(m[1]); resolve(); }
      });
      this.proc.once("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${this.log}`)); });
    });
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }
  async stop(signal = "SIGTERM") {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    return this.exited;
  }
  // SIGTERM must end the server with 0: anything else (a sanitizer report, a crash) fails.
  async stopCleanly() {
    const { code, signal } = await this.stop();
    if (code !== 0) throw new Error(`trtwatch serve exited with ${signal || code}:\n${this.log.slice(-4000)}`);
  }
  async api(method, path, body, headers = {}) {
    const res = await fetch(this.url + path, { method, headers: { "Content-Type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = text; }
    return { status: res.status, body: json, headers: res.headers };
  }
  async submit(request, headers) {
    const r = await this.api("POST", "/builds", request, headers);
    if (r.status !== 201) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }
  async waitFor(id, predicate, timeoutMs = 60000, headers) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.api("GET", `/builds/${id}`, undefined, headers);
      if (r.status === 200 && predicate(r.body)) return r.body;
      if (Date.now() > deadline) throw new Error(`build ${id} never matched; last: ${JSON.stringify(r.body)}`);
      await sleep(100);
    }
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The setup a suite file shares: one `trtwatch serve` (unless `withServer` is false) and
// one browser for all its tests, handed to `use(server, browser)` once started; after the
// last test the browser closes, the server stops cleanly and its data goes, and the
// screenshots taken (`shots`, the names screenshot() returned) are listed.
export function serverAndBrowserPerFile(use, { shots = [], withServer = true } = {}) {
  let server = null;
  let browser = null;
  before(async () => {
    if (withServer) server = await new Server().start();
    browser = await launchBrowser();
    use(server, browser);
  });
  after(async () => {
    await browser?.close();
    if (server) {
      await server.stopCleanly();
      removeDir(server.dataDir);
    }
    if (shots.length) console.log(`screenshots:\n  ${shots.join("\n  ")}`);
  });
}

export async function launchBrowser() {
  // launch() gives every run a fresh temporary --user-data-dir and removes it on close.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

// A page that remembers its console errors and uncaught exceptions. `allowed` lists
// patterns of errors a test provokes on purpose (a server taken down, a wrong token).
export async function openPage(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  page.errors = [];
  page.on("console", (msg) => { if (msg.type() === "error") page.errors.push(`console: ${msg.text()}`); });
  page.on("pageerror", (err) => page.errors.push(`exception: ${err.message}`));
  page.unexpectedErrors = (allowed = []) => page.errors.filter((e) => !allowed.some((re) => re.test(e)));
  return page;
}

// Closes the page's context. Route handlers still awaiting a response when the
// context goes would reject after the test ended, so they are dropped first.
export async function closePage(page) {
  await page.unrouteAll({ behavior: "ignoreErrors" });
  await page.context().close();
}

export async function screenshot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export function writeToken(dir, token) {
  const path = join(dir, "token");
  writeFileSync(path, token + "\n", { mode: 0o600 });
  return path;
}

export function removeDir(dir) { rmSync(dir, { recursive: true, force: true }); }

// Kills a worker a SIGKILLed server left behind (its own process group).
export function killWorker(pid) {
  if (!pid) return;
  try { process.kill(-pid, "SIGKILL"); } catch { /* already gone */ }
}
