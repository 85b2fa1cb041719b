// The extension's controller, driving the real `trtwatch` binary (TRTWATCH_BIN) and a
// real `trtwatch serve`, against the TEST DOUBLE of the vscode API (vscode_double.ts).

import './use_vscode_double';

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { DEFAULT_SETTINGS, simulateArgs } from '../src/build_args';
import { CliSource } from '../src/cli_source';
import { BUILDING_CONTEXT, BuildController, CANCELLING_MESSAGE } from '../src/controller';
import { RemoteSource } from '../src/remote_source';
import * as vscode from './vscode_double';

const BIN = process.env.TRTWATCH_BIN ?? '';
if (!BIN) throw new Error('set TRTWATCH_BIN to the trtwatch binary (ctest and scripts/ci.sh do)');

let controller: BuildController;

before(() => {
  controller = new BuildController();
});
after(() => controller.dispose());
beforeEach(() => {
  vscode.reset();
  vscode.setAnswer(() => undefined);
});

function until(what: string, cond: () => boolean, timeoutMs = 20000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (cond()) resolve();
      else if (Date.now() - start > timeoutMs) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(poll, 10);
    };
    poll();
  });
}

function topLevelCount(message: string | undefined): number | undefined {
  const m = /^Building engine (\d+)\/\d+/.exec(message ?? '');
  return m ? Number(m[1]) : undefined;
}

test('a build reports its phases in order, then succeeded', { timeout: 60000 }, async () => {
  const source = new CliSource(BIN, simulateArgs('small-cnn', { ...DEFAULT_SETTINGS, simulateSpeed: 4 }));
  const outcome = await controller.run('Simulated build (small-cnn)', source, source.commandLine);
  assert.equal(outcome.state, 'succeeded');
  assert.equal(outcome.unavailable, false);

  assert.equal(vscode.notifications.length, 1);
  const n = vscode.notifications[0];
  assert.equal(n.title, 'TensorRT: Simulated build (small-cnn)');
  assert.ok(n.cancellable && n.done);
  assert.ok(n.reports.length >= 3, `several reports (${n.reports.length})`);
  assert.ok(n.reports.some((r) => (r.message ?? '').includes(' \u203a ')), 'a nested phase path');
  // In order: the top-level count never goes back, increments are positive and add up to 100 %.
  const counts = n.reports.map((r) => topLevelCount(r.message)).filter((c): c is number => c !== undefined);
  assert.ok(counts.every((c, i) => i === 0 || c >= counts[i - 1]), `top-level counts in order: ${counts.join(' ')}`);
  const increments = n.reports.map((r) => r.increment ?? 0);
  assert.ok(increments.every((x) => x >= 0));
  const total = increments.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - 100) < 1e-6, `increments add up to 100 (${total})`);

  // The log: the command line, phase lines in stream order, then the summary.
  const log = vscode.outputLines;
  assert.ok(log[1].startsWith(`$ ${BIN} build --simulate small-cnn`));
  const start = log.findIndex((l) => l.includes('start  Building engine'));
  const finish = log.findIndex((l) => l.includes('finish Building engine'));
  assert.ok(start > 0 && finish > start);
  assert.ok(log.some((l) => l.startsWith('Build succeeded after')));

  // Tree: the whole phase tree, finished; the building context set, then cleared.
  const roots = vscode.treeProvider.getChildren() as { name: string }[];
  assert.equal(roots[0].name, 'Building engine');
  const item = vscode.treeProvider.getTreeItem(roots[0]) as vscode.TreeItem;
  assert.match(item.description ?? '', /^6\/6 \u00b7 \d/);
  assert.equal(item.iconPath?.id, 'pass');
  const contexts = vscode.calls.filter((c) => c.call === 'commands.executeCommand' && c.args[1] === BUILDING_CONTEXT).map((c) => c.args[2]);
  assert.deepEqual(contexts, [true, false]);
  assert.equal(vscode.messages.at(-1)?.severity, 'information');
  assert.match(vscode.messages.at(-1)?.text ?? '', /Build succeeded after/);
  assert.match(vscode.statusBar.text, /succeeded/);
});

test('Cancel on the notification sends SIGINT: cancelling at once, then cancelled', { timeout: 60000 }, async () => {
  const source = new CliSource(BIN, simulateArgs('large-transformer', DEFAULT_SETTINGS));
  const running = controller.run('Simulated build (large-transformer)', source);
  await until('the build to report progress', () => (vscode.notifications[0]?.reports.length ?? 0) >= 3);
  const n = vscode.notifications[0];
  n.pressCancel();
  // Said at once, before TensorRT (here the simulator) has stopped.
  assert.equal(n.reports.at(-1)?.message, `${CANCELLING_MESSAGE}\u2026`);
  assert.equal(vscode.treeView.message, `${CANCELLING_MESSAGE}\u2026`);
  assert.match(vscode.statusBar.text, /cancelling/);
  const outcome = await running;
  assert.equal(outcome.state, 'cancelled');
  // The CLI names the signal it got: this was SIGINT, its cooperative cancel.
  assert.ok(vscode.outputLines.some((l) => /cancel requested \(signal\): interrupted \(SIGINT\)/.test(l)), vscode.outputLines.join('\n'));
  assert.ok(vscode.outputLines.some((l) => l.startsWith('cancel latency: ')));
  assert.equal(vscode.messages.at(-1)?.severity, 'warning');
  assert.match(vscode.messages.at(-1)?.text ?? '', /Build cancelled after .* \(TensorRT stopped .* after the request\)/);
  assert.match(vscode.treeView.message ?? '', /^Build cancelled/);
});

test('the Cancel command (and the tree view\'s Stop) take the same path; a second Stop offers force', { timeout: 60000 }, async () => {
  const source = new CliSource(BIN, simulateArgs('large-transformer', DEFAULT_SETTINGS));
  const running = controller.run('Simulated build', source);
  await until('the build to start', () => (vscode.notifications[0]?.reports.length ?? 0) >= 2);
  vscode.setAnswer((m) => (m.actions.includes('Force stop') ? 'Force stop' : undefined));
  controller.cancel();
  controller.cancel();
  const outcome = await running;
  assert.equal(outcome.state, 'cancelled');
  const force = vscode.messages.find((m) => m.actions.includes('Force stop'));
  assert.ok(force && force.text.startsWith(CANCELLING_MESSAGE));
});

test('a timeout ends timed out, not cancelled', { timeout: 60000 }, async () => {
  const source = new CliSource(BIN, simulateArgs('large-transformer', { ...DEFAULT_SETTINGS, timeout: '500ms' }));
  const outcome = await controller.run('Simulated build', source);
  assert.equal(outcome.state, 'timed_out');
  assert.match(outcome.summary, /^Build timed out after .*--timeout 500ms/);
  assert.equal(vscode.messages.at(-1)?.severity, 'warning');
});

test('a failing build shows TensorRT\'s error', { timeout: 60000 }, async () => {
  const outcome = await controller.run('Simulated build', new CliSource(BIN, simulateArgs('failing', { ...DEFAULT_SETTINGS, simulateSpeed: 4 })));
  assert.equal(outcome.state, 'failed');
  assert.match(outcome.summary, /Could not find any implementation/);
  assert.equal(vscode.messages.at(-1)?.severity, 'error');
});

test('a missing binary says so and how to install it', { timeout: 60000 }, async () => {
  const missing = path.join(os.tmpdir(), 'no-such-dir', 'trtwatch');
  const outcome = await controller.run('Simulated build', new CliSource(missing, ['--simulate', 'small-cnn']));
  assert.equal(outcome.state, 'failed');
  assert.equal(outcome.unavailable, true);
  const m = vscode.messages.at(-1);
  assert.equal(m?.severity, 'error');
  assert.ok(m?.text.includes(`trtwatch not found: "${missing}"`), m?.text);
  assert.match(m?.text ?? '', /trtwatch\.binaryPath/);
  assert.deepEqual(m?.actions, ['Open Settings', 'Show Log']);
  assert.equal(vscode.context[BUILDING_CONTEXT], false, 'the Stop button goes away');
});

test('an input error (exit 2) shows the CLI\'s own message', { timeout: 60000 }, async () => {
  const outcome = await controller.run('Build', new CliSource(BIN, ['/no/such/model.onnx', '-o', '/tmp/x.engine']));
  assert.equal(outcome.unavailable, true);
  assert.ok(vscode.outputLines.some((l) => l.includes('No such file or directory')), vscode.outputLines.join('\n'));
  assert.match(outcome.summary, /nothing was built/);
});

// Starts a real `trtwatch serve` on a free loopback port; stopped when the test ends.
async function startService(t: { after(fn: () => void): void }, extraArgs: string[] = []): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtwatch-vscode-'));
  const serve = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--data-dir', dataDir, ...extraArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => {
    serve.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  let stderr = '';
  serve.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  await until('the service to listen', () => /listening on (http:\/\/\S+)/.test(stderr));
  return /listening on (http:\/\/\S+)/.exec(stderr)![1];
}

// Remote mode: the same views from a real `trtwatch serve`.
test('remote: a service build is watched over SSE and Stop is POST /cancel', { timeout: 60000 }, async (t) => {
  const url = await startService(t);

  const ok = await controller.run('Remote small-cnn', new RemoteSource({ url }, { simulate: 'small-cnn', speed: 4 }));
  assert.equal(ok.state, 'succeeded');
  assert.ok(vscode.notifications[0].reports.some((r) => (r.message ?? '').includes(' \u203a ')));

  vscode.reset();
  const remote = new RemoteSource({ url }, { simulate: 'large-transformer' });
  const running = controller.run('Remote large-transformer', remote);
  await until('remote progress', () => (vscode.notifications[0]?.reports.length ?? 0) >= 3);
  vscode.notifications[0].pressCancel();
  assert.equal(vscode.treeView.message, `${CANCELLING_MESSAGE}\u2026`);
  const outcome = await running;
  assert.equal(outcome.state, 'cancelled');
  // The service's record says who cancelled: the API (its worker then got SIGTERM).
  const record = await (await fetch(`${url}/builds/${remote.id}`)).json() as { status: string; cancel: { reason: string } };
  assert.equal(record.status, 'cancelled');
  assert.equal(record.cancel.reason, 'api');

  vscode.reset();
  const refused = await controller.run('Remote', new RemoteSource({ url }, { simulate: 'no-such-profile' }));
  assert.equal(refused.unavailable, true);
  assert.match(refused.summary, /refused the build: 400/);
});

test('remote: the token setting is sent as the bearer token', { timeout: 60000 }, async (t) => {
  const token = 'vscode-test-token-0123456789abcdef';
  const tokenFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trtwatch-token-')), 'token');
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });  // the service refuses a token file others can read
  t.after(() => fs.rmSync(path.dirname(tokenFile), { recursive: true, force: true }));
  const url = await startService(t, ['--token-file', tokenFile]);

  const refused = await controller.run('Remote', new RemoteSource({ url }, { simulate: 'small-cnn', speed: 4 }));
  assert.equal(refused.unavailable, true);
  assert.match(refused.summary, /refused the build: 401/);

  vscode.reset();
  const ok = await controller.run('Remote', new RemoteSource({ url, token }, { simulate: 'small-cnn', speed: 4 }));
  assert.equal(ok.state, 'succeeded');
});
