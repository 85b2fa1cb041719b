// The documented reverse proxy with the real one (docs/deploy.md, "Behind a reverse
// proxy"): Debian's nginx, unprivileged on loopback ports with a configuration of its
// own, runs EXACTLY the nginx block docs/deploy.md shows (read from the page, only the
// upstream address replaced), in front of a real `trtwatch serve` with a token. Through
// it: a 5 MiB model upload (nginx's default body limit is 1 MiB), a build of it, its
// events followed (SSE), its engine downloaded with its digest checked (RFC 9530 §3),
// and the dashboard signed into and loaded in Chromium on the proxy's port (a Host
// without the port makes its module scripts cross-origin: 403). Then the page's
// single-sign-on block: nginx's basic authentication names the user in
// X-Forwarded-User, and the service's roles follow that name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Server, closePage, freePort, openPage, removeDir, screenshot, serverAndBrowserPerFile, sleep, tempDir,
  writeToken } from "./harness.mjs";

const NGINX = process.env.TRTWATCH_NGINX || "/usr/sbin/nginx";
const DEPLOY_MD = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "deploy.md");
const MiB = 1024 * 1024;

let browser;
const shots = [];
serverAndBrowserPerFile((_, b) => { browser = b; }, { shots, withServer: false });

// The first ```nginx block after the page's `name` marker (<!-- proxy-recipe: ...).
function recipeFromDeployMd(text, name = "proxy-recipe") {
  const marker = text.indexOf(`<!-- ${name}:`);
  assert.ok(marker >= 0, `docs/deploy.md has no ${name} marker`);
  const open = text.indexOf("```nginx\n", marker);
  const close = text.indexOf("\n```", open + 9);
  assert.ok(open >= 0 && close > open, "no nginx block after the marker");
  return text.slice(open + "```nginx\n".length, close + 1);
}

// nginx with `block` (and `serverExtra`) as its one server's content, on `port`;
// resolves once it answers (any status: the sign-in recipe answers 401).
async function startNginx(block, port, serverExtra = "") {
  const prefix = tempDir("nginx");
  // As root, nginx's workers run as nobody: they must reach the temp folders it makes.
  chmodSync(prefix, 0o755);
  mkdirSync(join(prefix, "logs"));
  const conf = join(prefix, "nginx.conf");
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${join(prefix, t)};`).join("\n");
  writeFileSync(conf, `daemon off;
worker_processes 1;
pid ${join(prefix, "nginx.pid")};
error_log ${join(prefix, "logs", "error.log")} warn;
events { worker_connections 256; }
http {
  access_log off;
${temp}
  server {
    listen 127.0.0.1:${port};
${serverExtra}
${block}
  }
}
`);
  const proc = spawn(NGINX, ["-p", prefix, "-c", conf, "-e", join(prefix, "logs", "error.log")],
    { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  proc.stderr.on("data", (c) => { log += c; });
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`nginx exited ${proc.exitCode}: ${log}`);
    try { await fetch(url + "/healthz"); break; } catch { /* not up yet */ }
    if (i > 100) throw new Error(`nginx did not answer: ${log}`);
    await sleep(100);
  }
  return { url, prefix, stop: async () => { proc.kill("SIGQUIT"); await exited; removeDir(prefix); },
    errors: () => (existsSync(join(prefix, "logs", "error.log")) ? readFileSync(join(prefix, "logs", "error.log"), "utf8") : "") };
}

function pattern(size) {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i * 7 + (i >> 8)) & 0xff;
  return out;
}

// The events of build `id` through `url`, read until the stream ends (after build_finish).
async function followEvents(url, id, headers) {
  const res = await fetch(`${url}/builds/${id}/events`, { headers });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /^text\/event-stream/);
  const names = [];
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of res.body) {
    text += decoder.decode(chunk, { stream: true });
    for (let end; (end = text.indexOf("\n\n")) >= 0; text = text.slice(end + 2)) {
      const m = text.slice(0, end).match(/^event: (.+)$/m);
      if (m) names.push(m[1]);
    }
  }
  return names;
}

test("docs/deploy.md's nginx block, with real nginx: upload, build, events, engine with its digest, dashboard", { timeout: 120000 }, async (t) => {
  if (!existsSync(NGINX)) { t.skip(`${NGINX} is missing (apt-get install nginx-light)`); return; }
  if (!process.env.TRTWATCH_DOUBLE_BIN) { t.skip("built without TRTWATCH_TENSORRT_DOUBLE_TESTS"); return; }
  const dir = tempDir("proxy");
  const token = "5f0c8e2a9b7d4c1e3a6f8b0d2c4e6a8f";
  const auth = { Authorization: `Bearer ${token}` };
  const server = await new Server({ bin: process.env.TRTWATCH_DOUBLE_BIN, dataDir: join(dir, "data"),
    args: ["--token-file", writeToken(dir, token)],
    env: { LD_LIBRARY_PATH: process.env.TRTWATCH_FAKE_TENSORRT_DIR, FAKE_TENSORRT_ENGINE_BYTES: String(3 * MiB + 5) } }).start();
  const block = recipeFromDeployMd(readFileSync(DEPLOY_MD, "utf8"));
  assert.ok(block.includes("proxy_pass http://127.0.0.1:8470;"), "the recipe proxies to the documented address");
  const nginx = await startNginx(block.replace("http://127.0.0.1:8470", server.url), await freePort());
  try {
    // A model of a few MiB, above nginx's default 1 MiB body limit, with its digest.
    const model = pattern(5 * MiB + 3);
    const digest = createHash("sha256").update(model).digest("base64");
    const put = await fetch(`${nginx.url}/models/net`, { method: "PUT", body: model,
      headers: { ...auth, "Content-Digest": `sha-256=:${digest}:` } });
    const putText = await put.text();
    assert.equal(put.status, 201, putText);
    const stored = JSON.parse(putText);
    assert.equal(stored.files[0].size, model.length);
    // It comes back as it went, with its digest (RFC 9530 §3).
    const back = await fetch(`${nginx.url}/models/net/model.onnx`, { headers: auth });
    assert.equal(back.status, 200);
    assert.equal(back.headers.get("repr-digest"), `sha-256=:${digest}:`);
    assert.ok(Buffer.from(await back.arrayBuffer()).equals(model));

    const submitted = await fetch(`${nginx.url}/builds`, { method: "POST",
      headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify({ model: "models:net" }) });
    const submittedText = await submitted.text();
    assert.equal(submitted.status, 201, submittedText);
    const { id } = JSON.parse(submittedText);
    const events = await followEvents(nginx.url, id, auth);
    assert.equal(events.at(-1), "build_finish", `events: ${events.join(", ")}`);
    const record = await (await fetch(`${nginx.url}/builds/${id}`, { headers: auth })).json();
    assert.equal(record.status, "succeeded", JSON.stringify(record));

    // The engine, its digest checked against its bytes (RFC 9530 §3; the ETag is the same
    // digest, RFC 9110 §8.8.3); a range keeps the whole engine's digest.
    const engine = await fetch(`${nginx.url}/builds/${id}/engine`, { headers: { ...auth, "Want-Repr-Digest": "sha-256=10" } });
    assert.equal(engine.status, 200);
    const bytes = Buffer.from(await engine.arrayBuffer());
    assert.equal(bytes.length, 3 * MiB + 5);
    const sha = createHash("sha256").update(bytes);
    const hex = sha.copy().digest("hex");
    assert.equal(engine.headers.get("repr-digest"), `sha-256=:${sha.digest("base64")}:`);
    assert.equal(engine.headers.get("etag"), `"${hex}"`);
    assert.equal(record.engine.sha256, hex);
    const part = await fetch(`${nginx.url}/builds/${id}/engine`, { headers: { ...auth, Range: "bytes=0-99" } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get("repr-digest"), engine.headers.get("repr-digest"));
    assert.equal((await part.arrayBuffer()).byteLength, 100);

    // The dashboard on the proxy's port: sign in, then the build's page, live.
    const page = await openPage(browser);
    await page.goto(`${nginx.url}/ui/builds/${id}`);
    await page.getByRole("heading", { name: "Sign in to trtwatch" }).waitFor();
    await page.getByLabel("Access token").fill(token);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: id }).waitFor();
    await page.waitForFunction(() => document.querySelector("main")?.dataset.status === "succeeded", null, { timeout: 30000 });
    await page.goto(`${nginx.url}/`);
    await page.locator("#connection[data-state=live]").waitFor({ timeout: 30000 });
    shots.push(await screenshot(page, "proxy-dashboard"));
    assert.deepEqual(page.unexpectedErrors(), []);
    await closePage(page);
    assert.doesNotMatch(nginx.errors(), /\[(error|crit|alert|emerg)\]/);
  } finally {
    await nginx.stop();
    await server.stopCleanly();
    removeDir(dir);
  }
});

// An htpasswd line nginx reads: {SHA} is base64 of the password's SHA-1.
const htpasswdLine = (user, password) => `${user}:{SHA}${createHash("sha1").update(password).digest("base64")}\n`;
const basic = (user, password) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` });

test("docs/deploy.md's single-sign-on block, with real nginx: the signed-in user's role, a forged header replaced, the dashboard as that user", { timeout: 120000 }, async (t) => {
  if (!existsSync(NGINX)) { t.skip(`${NGINX} is missing (apt-get install nginx-light)`); return; }
  if (!process.env.TRTWATCH_DOUBLE_BIN) { t.skip("built without TRTWATCH_TENSORRT_DOUBLE_TESTS"); return; }
  const dir = tempDir("sso");
  chmodSync(dir, 0o755);  // nginx's worker (nobody, as root) reads the password file
  const users = join(dir, "users");
  writeFileSync(users, "ada builder -\nbob viewer -\n", { mode: 0o600 });
  const htpasswd = join(dir, "htpasswd");
  writeFileSync(htpasswd, htpasswdLine("ada", "ada-password") + htpasswdLine("bob", "bob-password"), { mode: 0o644 });
  // The proxy gets an address of its own (deploy.md): a client on 127.0.0.1 is never it.
  const server = await new Server({ bin: process.env.TRTWATCH_DOUBLE_BIN, dataDir: join(dir, "data"),
    args: ["--users", users, "--trusted-proxy", "127.0.0.2", "--identity-header", "X-Forwarded-User"],
    env: { LD_LIBRARY_PATH: process.env.TRTWATCH_FAKE_TENSORRT_DIR } }).start();
  const block = recipeFromDeployMd(readFileSync(DEPLOY_MD, "utf8"), "sso-recipe");
  assert.ok(block.includes("auth_basic_user_file /etc/nginx/trtwatch.htpasswd;"), "the recipe's password file");
  assert.ok(block.includes("proxy_set_header X-Forwarded-User $remote_user;"), "the recipe sets the header");
  const nginx = await startNginx(block.replace("http://127.0.0.1:8470", server.url)
    .replace("/etc/nginx/trtwatch.htpasswd", htpasswd), await freePort(), "    proxy_bind 127.0.0.2;");
  const ada = basic("ada", "ada-password");
  const bob = basic("bob", "bob-password");
  const json = { "Content-Type": "application/json" };
  try {
    // Nobody signed in: nginx asks for the sign-in and the service is never reached.
    const anonymous = await fetch(`${nginx.url}/builds`);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get("www-authenticate"), /^Basic/);
    assert.equal((await fetch(`${nginx.url}/builds`, { headers: basic("ada", "wrong") })).status, 401);

    // ada is a builder: her build is hers.
    const submitted = await fetch(`${nginx.url}/builds`, { method: "POST", headers: { ...ada, ...json },
      body: JSON.stringify({ simulate: "large-transformer", seed: 7, speed: 1 }) });
    const submittedText = await submitted.text();
    assert.equal(submitted.status, 201, submittedText);
    const { id } = JSON.parse(submittedText);
    const record = await (await fetch(`${nginx.url}/builds/${id}`, { headers: bob })).json();
    assert.equal(record.submitted_by, "ada");

    // bob is a viewer: he reads, but may not submit or cancel (403 naming the role,
    // before any body is read), even when he sends ada's name himself.
    assert.equal((await fetch(`${nginx.url}/builds`, { headers: bob })).status, 200);
    for (const headers of [bob, { ...bob, "X-Forwarded-User": "ada" }]) {
      const refused = await fetch(`${nginx.url}/builds`, { method: "POST", headers: { ...headers, ...json },
        body: JSON.stringify({ simulate: "small-cnn" }) });
      const body = await refused.json();
      assert.equal(refused.status, 403, JSON.stringify(body));
      assert.equal(body.needed_role, "builder");
      assert.match(body.error, /bob is a viewer/);
    }
    assert.equal((await fetch(`${nginx.url}/builds/${id}/cancel`, { method: "POST", headers: { ...bob, ...json },
      body: "{}" })).status, 403);

    // Straight to the service, the header names nobody: 127.0.0.1 is not the proxy.
    const direct = await fetch(`${server.url}/builds`, { headers: { "X-Forwarded-User": "ada" } });
    assert.equal(direct.status, 401);

    // The dashboard through the proxy, signed in by it, as each user's role.
    for (const [user, password, role] of [["bob", "bob-password", "viewer"], ["ada", "ada-password", "builder"]]) {
      const page = await openPage(browser, { httpCredentials: { username: user, password } });
      await page.goto(`${nginx.url}/ui/builds/${id}`);
      await page.getByRole("heading", { name: id }).waitFor();
      await page.waitForFunction((r) => document.body.dataset.role === r, role, { timeout: 30000 });
      await page.locator("#connection[data-state=live]").waitFor({ timeout: 30000 });
      shots.push(await screenshot(page, `proxy-sso-${user}`));
      assert.deepEqual(page.unexpectedErrors(), []);
      await closePage(page);
    }

    // ada cancels her own build through the proxy, and the record says she did.
    const cancel = await fetch(`${nginx.url}/builds/${id}/cancel`, { method: "POST", headers: { ...ada, ...json },
      body: "{}" });
    assert.equal(cancel.status, 202, await cancel.text());
    const after = await (await fetch(`${nginx.url}/builds/${id}`, { headers: ada })).json();
    assert.equal(after.cancelled_by, "ada");
    // The one error nginx logs is the wrong password it was sent on purpose.
    const errors = nginx.errors().split("\n").filter((l) => !/user "ada": password mismatch/.test(l)).join("\n");
    assert.doesNotMatch(errors, /\[(error|crit|alert|emerg)\]/);
  } finally {
    await nginx.stop();
    await server.stopCleanly();
    removeDir(dir);
  }
});
