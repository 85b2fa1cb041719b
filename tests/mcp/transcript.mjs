// Prints one SDK client session with `trtwatch mcp`: the tool list, the progress of a
// simulated large-transformer build, a cancel, and the final record.
// Usage: node tests/mcp/transcript.mjs path/to/trtwatch [SPEED] [ABORT_AFTER_REGEX]
// (aborts at the first notification whose message matches)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [bin, speed = '2', abortAt = 'no progress callback'] = process.argv.slice(2);
const dataDir = mkdtempSync(join(tmpdir(), 'trtwatch-mcp-transcript-'));
const client = new Client({ name: 'transcript', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: bin, args: ['mcp', '--data-dir', dataDir], stderr: 'ignore' }));
const t0 = Date.now();
const at = () => `[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s]`;
console.log(`initialize -> ${JSON.stringify(client.getServerVersion())}`);
const { tools } = await client.listTools();
console.log('tools/list:');
for (const t of tools) console.log(`  ${t.name}: ${t.description.split('. ')[0].replace(/\.$/, '')}.`);

const controller = new AbortController();
let seen = 0;
console.log(`tools/call build_engine {"simulate":"large-transformer","speed":${speed}} with a progress token:`);
const call = client.callTool(
  { name: 'build_engine', arguments: { simulate: 'large-transformer', speed: Number(speed) } },
  CallToolResultSchema,
  {
    signal: controller.signal,
    timeout: 600000,
    onprogress: (p) => {
      console.log(`${at()} progress ${p.progress.toFixed(3)}/${p.total ?? '?'}  ${p.message}`);
      if (seen > 0 || new RegExp(abortAt).test(p.message)) ++seen;
      if (seen === 1) {
        console.log(`${at()} client aborts the request -> notifications/cancelled`);
        controller.abort('the agent has seen enough');
      }
    },
  },
);
try {
  await call;
} catch (e) {
  console.log(`${at()} callTool rejected: ${e.message}`);
}
const { builds } = (await client.callTool({ name: 'list_builds', arguments: { limit: 1 } })).structuredContent;
let record;
for (;;) {
  const r = await client.callTool({ name: 'get_build', arguments: { id: builds[0].id } });
  record = r.structuredContent;
  if (!['queued', 'running', 'cancelling'].includes(record.status)) {
    console.log(`${at()} get_build: ${r.content[0].text}`);
    break;
  }
  await new Promise((res) => setTimeout(res, 100));
}
const { phase, ...rest } = record;
console.log(JSON.stringify(rest, null, 2));
await client.close();
