// activate() against the TEST DOUBLE of vscode: the manifest's commands are the ones
// registered, a command runs the real binary from the settings, and a `trtwatch` task
// runs through its pseudoterminal with trtwatch's exit code and the problem-matcher line.

import './use_vscode_double';

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import type * as vs from 'vscode';
import { activate } from '../src/extension';
import * as vscode from './vscode_double';

const BIN = process.env.TRTWATCH_BIN ?? '';
if (!BIN) throw new Error('set TRTWATCH_BIN to the trtwatch binary (scripts/ci.sh does)');
const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
const subscriptions: { dispose(): unknown }[] = [];

before(() => activate({ subscriptions } as unknown as vs.ExtensionContext));
after(() => subscriptions.forEach((s) => s.dispose()));
beforeEach(() => vscode.reset());

test('every command of package.json is registered, and the task provider', () => {
  const declared = (manifest.contributes.commands as { command: string }[]).map((c) => c.command).sort();
  assert.deepEqual([...vscode.registeredCommands.keys()].sort(), declared);
  assert.ok(vscode.taskProviders.has('trtwatch'));
  const taskTypes = (manifest.contributes.taskDefinitions as { type: string }[]).map((d) => d.type);
  assert.deepEqual(taskTypes, ['trtwatch']);
  const settingKeys = Object.keys(manifest.contributes.configuration.properties);
  for (const key of ['binaryPath', 'buildOptions', 'timeout', 'killAfter', 'stallTimeout', 'simulate.speed', 'remote.url', 'remote.token']) {
    assert.ok(settingKeys.includes(`trtwatch.${key}`), `setting trtwatch.${key} is declared`);
  }
});

test('"TensorRT: Simulate a build" runs the binary named in the settings', async () => {
  vscode.settings.set('trtwatch.binaryPath', BIN);
  vscode.settings.set('trtwatch.simulate.speed', 4);
  await vscode.registeredCommands.get('trtwatch.simulate')!('small-cnn');
  assert.match(vscode.outputLines[1], /--simulate small-cnn --speed 4 --progress json$/);
  assert.match(vscode.messages.at(-1)?.text ?? '', /^Simulated build \(small-cnn\): Build succeeded after/);
});

// Runs a task the way VS Code does: resolve it, open its pseudoterminal, wait for close.
async function runTask(definition: Record<string, unknown>): Promise<{ code: number; text: string }> {
  const provider = vscode.taskProviders.get('trtwatch');
  const task = provider.resolveTask(new vscode.Task(definition, vscode.TaskScope.Workspace, 'test', 'trtwatch'));
  assert.ok(task, 'the definition resolves');
  assert.deepEqual(task.problemMatchers, '$trtwatch');
  const pty = await task.execution.callback({});
  let text = '';
  pty.onDidWrite((s: string) => { text += s; });
  const closed = new Promise<number>((resolve) => pty.onDidClose(resolve));
  pty.open(undefined);
  return { code: await closed, text };
}

test('a trtwatch task ends with trtwatch\'s exit code; a failed model build gives the problem-matcher line', async () => {
  vscode.settings.set('trtwatch.binaryPath', BIN);
  vscode.settings.set('trtwatch.simulate.speed', 4);
  const ok = await runTask({ type: 'trtwatch', simulate: 'small-cnn' });
  assert.equal(ok.code, 0);
  assert.ok(ok.text.includes('\r\n'), 'terminal line endings');
  assert.match(ok.text, /Build succeeded after/);

  const failed = await runTask({ type: 'trtwatch', simulate: 'failing' });
  assert.equal(failed.code, 1);
  assert.match(failed.text, /Could not find any implementation/);

  const timedOut = await runTask({ type: 'trtwatch', simulate: 'large-transformer', options: ['--timeout', '300ms'] });
  assert.equal(timedOut.code, 124);

  const missing = await runTask({ type: 'trtwatch', model: 'no/such/model.onnx' });
  assert.equal(missing.code, 1);
  const matcher = manifest.contributes.problemMatchers[0];
  const line = missing.text.split('\r\n').find((l) => new RegExp(matcher.pattern.regexp).test(l));
  assert.ok(line, `a line for the problem matcher in:\n${missing.text}`);
  assert.equal(new RegExp(matcher.pattern.regexp).exec(line)![matcher.pattern.file], 'no/such/model.onnx');
});

test('closing a task\'s terminal is Stop', async () => {
  vscode.settings.set('trtwatch.binaryPath', BIN);
  const provider = vscode.taskProviders.get('trtwatch');
  const task = provider.resolveTask(new vscode.Task({ type: 'trtwatch', simulate: 'large-transformer' }, vscode.TaskScope.Workspace, 't', 'trtwatch'));
  const pty = await task.execution.callback({});
  const closed = new Promise<number>((resolve) => pty.onDidClose(resolve));
  pty.open(undefined);
  await new Promise((r) => setTimeout(r, 300));
  pty.close();
  assert.equal(await closed, 130);
});
