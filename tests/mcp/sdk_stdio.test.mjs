// `trtwatch mcp` driven by the official MCP TypeScript SDK client over stdio.
// Run by ctest (TRTWATCH_BIN names the binary): node --test tests/mcp/sdk_stdio.test.mjs
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const BIN = process.env.TRTWATCH_BIN ?? new URL('../../build/trtwatch', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'trtwatch-mcp-'));
let client;
let transport;

before(async () => {
  transport = new StdioClientTransport({ command: BIN, args: ['mcp', '--data-dir', dataDir], stderr: 'pipe' });
  client = new Client({ name: 'trtwatch-sdk-test', version: '1.0.0' });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForStatus(id, statuses, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const r = await client.callTool({ name: 'get_build', arguments: { id } });
    if (statuses.includes(r.structuredContent.status)) return r.structuredContent;
    await sleep(100);
  }
  throw new Error(`build ${id} did not reach ${statuses}`);
}

test('initialize negotiates 2025-11-25 and names the server', () => {
  assert.equal(transport._process !== undefined, true);
  const info = client.getServerVersion();
  assert.equal(info.name, 'trtwatch');
  assert.ok(client.getServerCapabilities().tools);
  assert.match(client.getInstructions(), /build_engine/);
});

test('tools/list gives every tool with input and output schemas', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['build_engine', 'cancel_build', 'doctor', 'get_build', 'list_builds']);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(t.outputSchema.type, 'object', t.name);
  }
  const build = tools.find((t) => t.name === 'build_engine');
  assert.ok(build.inputSchema.properties.simulate.enum.includes('large-transformer'));
});

test('a simulated build reports increasing progress with a total and where it is', async () => {
  const progress = [];
  const result = await client.callTool(
    { name: 'build_engine', arguments: { simulate: 'small-cnn' } },
    CallToolResultSchema,
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(result.isError, false, JSON.stringify(result.content));
  assert.equal(result.structuredContent.status, 'succeeded');
  assert.equal(result.structuredContent.backend, 'simulated');
  assert.ok(progress.length >= 3, `only ${progress.length} progress notifications`);
  for (let i = 1; i < progress.length; ++i) assert.ok(progress[i].progress > progress[i - 1].progress, JSON.stringify(progress));
  assert.ok(progress.some((p) => p.total === 6 && /Building engine \d+\/6/.test(p.message)), JSON.stringify(progress));
  assert.ok(progress.every((p) => p.message.length > 0 && (p.total === undefined || p.progress <= p.total)));
});

test('aborting the request cancels the build: the record ends cancelled', async () => {
  const controller = new AbortController();
  const progress = [];
  const call = client.callTool(
    { name: 'build_engine', arguments: { simulate: 'large-transformer', speed: 4 } },
    CallToolResultSchema,
    {
      signal: controller.signal,
      onprogress: (p) => {
        progress.push(p);
        if (/Timing graph nodes/.test(p.message)) controller.abort('the agent changed its mind');
      },
    },
  );
  await assert.rejects(call);
  assert.ok(controller.signal.aborted, 'the build never reached "Timing graph nodes"');
  const { builds } = (await client.callTool({ name: 'list_builds', arguments: { limit: 1 } })).structuredContent;
  const record = await waitForStatus(builds[0].id, ['cancelled', 'failed', 'succeeded']);
  assert.equal(record.status, 'cancelled');
  assert.equal(record.cancel.reason, 'api');
  assert.match(record.cancel.message, /the agent changed its mind/);
});

test('a timeout budget cancels the build with reason budget', async () => {
  const result = await client.callTool({
    name: 'build_engine',
    arguments: { simulate: 'large-transformer', speed: 2, timeout: '1s' },
  });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent.status, 'cancelled');
  assert.equal(result.structuredContent.cancel.reason, 'budget');
  assert.match(result.content[0].text, /time budget of 1s/);
});

test('wait=false returns at once; cancel_build stops the build', async () => {
  const started = await client.callTool({ name: 'build_engine', arguments: { simulate: 'large-transformer', wait: false } });
  assert.equal(started.isError, false);
  const id = started.structuredContent.id;
  assert.ok(['queued', 'running'].includes(started.structuredContent.status));
  const cancelled = await client.callTool({ name: 'cancel_build', arguments: { id } });
  assert.equal(cancelled.isError, false);
  const record = await waitForStatus(id, ['cancelled']);
  assert.equal(record.cancel.reason, 'api');
  const again = await client.callTool({ name: 'cancel_build', arguments: { id } });
  assert.equal(again.isError, true);
  assert.match(again.content[0].text, /already finished/);
});

test('bad arguments are tool errors an agent can act on', async () => {
  const unknownProfile = await client.callTool({ name: 'build_engine', arguments: { simulate: 'resnet-9000' } });
  assert.equal(unknownProfile.isError, true);
  assert.match(unknownProfile.content[0].text, /unknown simulation profile "resnet-9000"; use one of .*small-cnn/);
  const typo = await client.callTool({ name: 'build_engine', arguments: { simulate: 'small-cnn', timout: '5s' } });
  assert.equal(typo.isError, true);
  assert.match(typo.content[0].text, /unknown argument "timout"/);
  const badTimeout = await client.callTool({ name: 'build_engine', arguments: { simulate: 'small-cnn', timeout: 'soon' } });
  assert.equal(badTimeout.isError, true);
  assert.match(badTimeout.content[0].text, /timeout/);
  const missing = await client.callTool({ name: 'get_build', arguments: { id: 'b_00000000000000000000000000000000' } });
  assert.equal(missing.isError, true);
  assert.match(missing.content[0].text, /no build/);
});

test('an unknown tool is a protocol error (invalid params)', async () => {
  await assert.rejects(client.callTool({ name: 'build_everything', arguments: {} }), (e) => {
    assert.ok(e instanceof McpError);
    assert.equal(e.code, ErrorCode.InvalidParams);
    assert.match(e.message, /unknown tool/);
    return true;
  });
});

test('an unknown method is a protocol error (method not found)', async () => {
  await assert.rejects(client.request({ method: 'builds/explode', params: {} }, z.object({})), (e) => {
    assert.ok(e instanceof McpError);
    assert.equal(e.code, ErrorCode.MethodNotFound);
    return true;
  });
});

test('doctor reports this trtwatch', async () => {
  const r = await client.callTool({ name: 'doctor', arguments: {} });
  assert.equal(r.isError, false);
  assert.equal(typeof r.structuredContent, 'object');
});

test('build_engine as a task: the SDK polls it to its result; tasks/cancel cancels another', async () => {
  const tools = (await client.listTools()).tools;
  assert.equal(tools.find((t) => t.name === 'build_engine').execution.taskSupport, 'optional');
  const messages = [];
  for await (const m of client.experimental.tasks.callToolStream(
    { name: 'build_engine', arguments: { simulate: 'small-cnn', speed: 5 } }, CallToolResultSchema, { task: { ttl: 60000 } })) {
    messages.push(m);
  }
  assert.equal(messages[0].type, 'taskCreated');
  assert.equal(messages[0].task.status, 'working');
  const last = messages.at(-1);
  assert.equal(last.type, 'result', JSON.stringify(last));
  assert.equal(last.result.structuredContent.status, 'succeeded');
  assert.equal(last.result.structuredContent.id, messages[0].task.taskId);
  assert.ok(messages.some((m) => m.type === 'taskStatus' && m.task.status === 'completed'));

  let created;
  for await (const m of client.experimental.tasks.callToolStream(
    { name: 'build_engine', arguments: { simulate: 'large-transformer' } }, CallToolResultSchema, { task: {} })) {
    created = m;
    break;  // stop following it: the task goes on without this request
  }
  const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
  assert.equal(cancelled.status, 'cancelled');
  const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  assert.equal(result.structuredContent.status, 'cancelled');
  assert.equal(result.structuredContent.cancel.reason, 'api');
  const { tasks } = await client.experimental.tasks.listTasks();
  assert.ok(tasks.some((t) => t.taskId === created.task.taskId && t.status === 'cancelled'));
});
