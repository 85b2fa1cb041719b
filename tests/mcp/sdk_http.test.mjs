// The MCP server at /mcp of `trtwatch serve` (Streamable HTTP), driven by the official
// MCP TypeScript SDK client, with the service's token; builds are the service's builds.
// Run by ctest (TRTWATCH_BIN names the binary): node --test tests/mcp/sdk_http.test.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

const BIN = process.env.TRTWATCH_BIN ?? new URL('../../build/trtwatch', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'trtwatch-mcp-http-'));
const TOKEN = 'mcp-http-test-token-0123456789';
let serve;
let base;
let client;

before(async () => {
  writeFileSync(join(dir, 'token'), TOKEN + '\n', { mode: 0o600 });  // the service refuses a token file others can read
  serve = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'), '--token-file', join(dir, 'token')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = createInterface({ input: serve.stderr });
  base = await new Promise((resolve, reject) => {
    lines.on('line', (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) resolve(m[1]);
    });
    serve.on('exit', (code) => reject(new Error(`trtwatch serve exited ${code}`)));
  });
  client = new Client({ name: 'trtwatch-sdk-http-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  }));
});

after(async () => {
  await client?.close();
  serve?.kill('SIGTERM');
  await new Promise((r) => serve.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
});

const rest = async (path) => (await fetch(new URL(path, base), { headers: { Authorization: `Bearer ${TOKEN}` } })).json();

test('initialize and tools/list over Streamable HTTP', async () => {
  assert.equal(client.getServerVersion().name, 'trtwatch');
  const { tools } = await client.listTools();
  assert.equal(tools.length, 5);
});

test('progress arrives on the request stream and the build is in the REST API', async () => {
  const progress = [];
  const r = await client.callTool({ name: 'build_engine', arguments: { simulate: 'small-cnn' } }, CallToolResultSchema, {
    onprogress: (p) => progress.push(p),
  });
  assert.equal(r.structuredContent.status, 'succeeded');
  assert.ok(progress.length >= 3);
  for (let i = 1; i < progress.length; ++i) assert.ok(progress[i].progress > progress[i - 1].progress);
  const record = await rest(`/builds/${r.structuredContent.id}`);
  assert.equal(record.status, 'succeeded');
});

test('aborting the request cancels the build through the service', async () => {
  const controller = new AbortController();
  const call = client.callTool({ name: 'build_engine', arguments: { simulate: 'large-transformer', speed: 4 } }, CallToolResultSchema, {
    signal: controller.signal,
    onprogress: (p) => {
      if (/Building engine [1-9]\/6/.test(p.message)) controller.abort('stop it');
    },
  });
  await assert.rejects(call);
  const { builds } = await rest('/builds?limit=1');
  let record;
  for (let i = 0; i < 300; ++i) {
    record = await rest(`/builds/${builds[0].id}`);
    if (record.status === 'cancelled') break;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(record.status, 'cancelled');
  assert.equal(record.cancel.reason, 'api');
});

test('a budget cancels with reason budget; an unknown tool is a protocol error', async () => {
  const r = await client.callTool({ name: 'build_engine', arguments: { simulate: 'large-transformer', timeout: 1 } });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.cancel.reason, 'budget');
  await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams);
});

const connectClient = async (name) => {
  const c = new Client({ name, version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  }));
  return c;
};

test('a build started as a task outlives its session: a later session follows it to the result', async () => {
  const first = await connectClient('trtwatch-sdk-http-task-1');
  const stream = first.experimental.tasks.callToolStream(
    { name: 'build_engine', arguments: { simulate: 'small-cnn', speed: 3 } }, CallToolResultSchema, { task: { ttl: 60000 } });
  const { value: created } = await stream.next();
  assert.equal(created.type, 'taskCreated');
  const taskId = created.task.taskId;
  await stream.return();
  await first.close();  // the agent disconnects

  const second = await connectClient('trtwatch-sdk-http-task-2');
  let task = await second.experimental.tasks.getTask(taskId);
  for (let i = 0; i < 600 && task.status === 'working'; ++i) {
    await new Promise((r) => setTimeout(r, 100));
    task = await second.experimental.tasks.getTask(taskId);
  }
  assert.equal(task.status, 'completed');
  const result = await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  assert.equal(result.structuredContent.status, 'succeeded');
  assert.equal((await rest(`/builds/${taskId}`)).status, 'succeeded');  // the service's build
  await second.close();
});

test('the token is required and a foreign Origin is refused', async () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '0' } } });
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  assert.equal((await fetch(new URL('/mcp', base), { method: 'POST', headers, body })).status, 401);
  const auth = { ...headers, Authorization: `Bearer ${TOKEN}` };
  const foreign = await fetch(new URL('/mcp', base), { method: 'POST', headers: { ...auth, Origin: 'http://evil.example' }, body });
  assert.equal(foreign.status, 403);
  const otherLocal = await fetch(new URL('/mcp', base), { method: 'POST', headers: { ...auth, Origin: 'http://localhost:3000' }, body });
  assert.equal(otherLocal.status, 403, 'another local page needs serve --allow-origin');
  const ok = await fetch(new URL('/mcp', base), { method: 'POST', headers: { ...auth, Origin: new URL(base).origin }, body });
  assert.equal(ok.status, 200);
  assert.match(ok.headers.get('mcp-session-id'), /^[0-9a-f]{32}$/);
  const noSession = await fetch(new URL('/mcp', base), { method: 'POST', headers: auth, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
  assert.equal(noSession.status, 400);
  const parseError = await fetch(new URL('/mcp', base), { method: 'POST', headers: auth, body: '{oops' });
  assert.equal(parseError.status, 400);
  assert.equal((await parseError.json()).error.code, -32700);
});
