// The extension as installed from its .vsix: activation, every command (one from the
// command palette), tasks and their problem matcher, remote mode with the token in
// SecretStorage, and what a user sees when the binary is missing.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Test, browser, config, until } from './harness';
import { EXTENSION_ID, VIEW_NAME, screen, setSetting, showView, toast } from './workbench';

function manifest(): { contributes: { commands: { command: string; title: string; category: string }[] } } {
  return vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
}

// Accepts the quick pick or input box that is open after typing `text` into it.
async function answerQuickInput(text: string): Promise<void> {
  await until('the quick input', () => browser.evaluate(() => !!document.querySelector('.quick-input-widget:not([style*="display: none"]) input'), 0));
  if (text) await browser.type(text);
  await browser.press('Enter');
}

// Picks `label` in the quick pick that is open once it shows `ready` (its title, or the
// input's value: ">" for the command palette). It types the label and presses Enter only
// once the focused row is that item: the list filters as the keys arrive, and a quick
// pick that is closing still shows, so neither alone says what Enter would pick.
async function pick(label: string, ready: { title?: string; value?: string }): Promise<void> {
  await until(`the quick pick (${JSON.stringify(ready)})`, () => browser.evaluate(({ title, value }) => {
    const widget = document.querySelector('.quick-input-widget:not([style*="display: none"])');
    const input = widget?.querySelector('input');
    return !!input && (title === undefined || widget!.querySelector('.quick-input-title')?.textContent === title) &&
      (value === undefined || input.value === value);
  }, ready));
  await browser.type(label);
  await until(`"${label}" focused in the quick pick`, () => browser.evaluate((l) =>
    document.querySelector('.quick-input-widget .monaco-list-row.focused')?.textContent?.includes(l) ?? false, label));
  await browser.press('Enter');
}

function endOfTask(name: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const sub = vscode.tasks.onDidEndTaskProcess((e) => {
      if (e.execution.task.name !== name) return;
      sub.dispose();
      resolve(e.exitCode);
    });
  });
}

async function outputText(): Promise<string> {
  // Monaco renders spaces as no-break spaces.
  return browser.evaluate(() => (document.querySelector('.part.panel .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' '), 0);
}

export const tests: Test[] = [
  {
    name: 'activation: installed from the .vsix, every command registered, the view with its welcome',
    fn: async () => {
      const ext = vscode.extensions.getExtension(EXTENSION_ID);
      assert.ok(ext, 'installed');
      await showView();
      await until('activation', () => ext.isActive);
      const registered = new Set(await vscode.commands.getCommands(true));
      for (const c of manifest().contributes.commands) assert.ok(registered.has(c.command), `${c.command} is registered`);
      await until('the view\'s welcome', () => browser.evaluate((name) => [...document.querySelectorAll('.pane')]
        .find((p) => p.querySelector('.pane-header .title')?.textContent?.toLowerCase() === name.toLowerCase())
        ?.querySelector('.welcome-view-content')?.textContent?.includes('No TensorRT build yet.'), VIEW_NAME));
      await browser.screenshot('activated-welcome');
    },
  },
  {
    name: 'the command palette finds "TensorRT: Simulate a build" by its category and runs it',
    timeoutMs: 60000,
    fn: async () => {
      await setSetting('simulate.speed', 8);
      await showView();
      await browser.press('F1');
      await pick('TensorRT: Simulate a build', { value: '>' });
      await pick('small-cnn', { title: 'Simulate a TensorRT build (no GPU needed)' });
      await toast(/^Simulated build \(small-cnn\): Build succeeded after/);
    },
  },
  {
    name: 'Show build log, Cancel with no build, Watch without a service, Build engine on a model',
    timeoutMs: 60000,
    fn: async () => {
      await showView();
      await vscode.commands.executeCommand('trtwatch.showLog');
      await until('the build\'s summary in the output panel', async () => /phase \(self: less its child phases\)/.test(await outputText()));
      await vscode.commands.executeCommand('trtwatch.cancel');
      await toast(/^No TensorRT build is running\.$/);
      await vscode.commands.executeCommand('trtwatch.watchRemote');
      await toast(/^Set "trtwatch\.remote\.url"/);

      const model = vscode.Uri.file(path.join(config.workspace, 'models', 'broken.onnx'));
      const build = vscode.commands.executeCommand('trtwatch.build', model);
      await answerQuickInput('');  // the options as they are
      await build;
      // Not a model trtwatch can build (nor TensorRT, where there is one): trtwatch's reason is shown.
      const end = await toast(/^Build failed: usage or input error: nothing was built: \S/);
      assert.deepEqual(end.buttons, ['Open Settings', 'Show Log']);
      assert.equal((await screen()).status, 'TensorRT failed');
    },
  },
  {
    name: 'tasks: the provider\'s tasks, and a failing model build\'s error as a problem on the model',
    timeoutMs: 60000,
    fn: async () => {
      const provided = await vscode.tasks.fetchTasks({ type: 'trtwatch' });
      const names = provided.map((t) => t.name);
      for (const p of ['small-cnn', 'large-transformer', 'failing']) assert.ok(names.includes(`simulate ${p}`), names.join(', '));

      const failing = provided.find((t) => t.name === 'simulate failing')!;
      const failed = endOfTask(failing.name);
      await vscode.tasks.executeTask(failing);
      assert.equal(await failed, 1);

      // The workspace's tasks.json (workbench/driver.mjs writes it) builds the broken model.
      const model = vscode.Uri.file(path.join(config.workspace, 'models', 'broken.onnx'));
      const engine = provided.find((t) => t.name === 'engine: broken');
      assert.ok(engine, `the tasks.json task is offered: ${names.join(', ')}`);
      const ended = endOfTask(engine.name);
      await vscode.tasks.executeTask(engine);
      assert.equal(await ended, 1);
      const problems = await until('a TensorRT problem on the model', () =>
        vscode.languages.getDiagnostics(model).find((d) => d.source === 'TensorRT'));
      assert.equal(problems.severity, vscode.DiagnosticSeverity.Error);
      assert.match(problems.message, /^Build failed/);
      await vscode.commands.executeCommand('workbench.actions.view.problems');
      await browser.screenshot('failing-build-problem');
    },
  },
  {
    name: 'remote mode: 401 without a token; the token typed into a password box goes to SecretStorage, not settings',
    timeoutMs: 90000,
    fn: async () => {
      await setSetting('remote.url', config.service.url);
      try {
        await showView();
        await vscode.commands.executeCommand('trtwatch.simulate', 'small-cnn');
        await toast(/refused the build: 401/);

        const asked = vscode.commands.executeCommand('trtwatch.setRemoteToken');
        const password = await until('a password box', () => browser.evaluate(() =>
          document.querySelector<HTMLInputElement>('.quick-input-widget input')?.type === 'password', 0));
        assert.ok(password);
        await answerQuickInput(config.service.token);
        await asked;
        await toast(/token is stored in VS Code's secret storage/);
        const inspected = vscode.workspace.getConfiguration('trtwatch').inspect('remote.token');
        assert.equal(inspected?.globalValue ?? inspected?.workspaceValue, undefined, 'no token in settings');
        const userSettings = path.join(process.env.HOME ?? '', '..', 'user-data', 'User', 'settings.json');
        if (fs.existsSync(userSettings)) assert.ok(!fs.readFileSync(userSettings, 'utf8').includes(config.service.token));

        await vscode.commands.executeCommand('trtwatch.simulate', 'small-cnn');
        await toast(/^Simulated build \(small-cnn\): Build succeeded after/);
        // The service has it: a small-cnn build that succeeded, seen with the token.
        const res = await fetch(`${config.service.url}/builds`, { headers: { Authorization: `Bearer ${config.service.token}` } });
        const listed = JSON.stringify(await res.json());
        assert.match(listed, /"status":"succeeded"/);
      } finally {
        await setSetting('remote.url', undefined);
      }
    },
  },
  {
    name: 'a missing binary: an error that says so, with Open Settings that opens trtwatch\'s settings',
    timeoutMs: 60000,
    fn: async () => {
      const missing = path.join(config.workspace, 'no-such-dir', 'trtwatch');
      await setSetting('binaryPath', missing);
      try {
        await showView();
        await vscode.commands.executeCommand('trtwatch.simulate', 'small-cnn');
        const shown = await toast(/^Build failed: trtwatch not found/);
        assert.ok(shown.message.includes(missing), shown.message);
        assert.deepEqual(shown.buttons, ['Open Settings', 'Show Log']);
        await browser.screenshot('missing-binary');
        await browser.click('.notification-list-item .monaco-button:has-text("Open Settings")');
        await until('the settings editor on trtwatch', () => browser.evaluate(() =>
          !!document.querySelector('.settings-editor') && document.body.textContent!.includes('Binary Path'), 0));
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      } finally {
        await setSetting('binaryPath', config.bin);
      }
    },
  },
  {
    name: 'a real build twice with the engine cache: the second reuses the engine, said at the end and in the log',
    timeoutMs: 90000,
    skip: () => (config.tensorrtDouble ? undefined : 'no TensorRT test double next to the binary (TRTWATCH_TENSORRT_DOUBLE_TESTS=OFF)'),
    fn: async () => {
      const model = vscode.Uri.file(path.join(config.workspace, 'models', 'cached.onnx'));
      // A ModelProto with only ir_version 8: the double's parser takes it, and the build key reads it.
      fs.writeFileSync(model.fsPath, Buffer.from([0x08, 0x08]));
      await setSetting('binaryPath', config.tensorrtDouble);
      await setSetting('buildOptions', ['--engine-cache', path.join(path.dirname(config.workspace), 'engine-cache')]);
      const buildIt = async () => {
        await showView();
        const build = vscode.commands.executeCommand('trtwatch.build', model);
        await answerQuickInput('');  // the options as they are; the cache comes from the setting
        await build;
      };
      try {
        await buildIt();
        const first = await toast(/^Build cached\.onnx: Build succeeded after/);
        assert.doesNotMatch(first.message, /reused/, 'the first build ran TensorRT and stored its engine');
        await buildIt();
        const second = await toast(/^Build cached\.onnx: Build succeeded after [\d.]+ s; reused the engine built \d+ seconds? ago in [\d.]+ s \(engine cache, key [0-9a-f]{12}\)$/);
        assert.deepEqual(second.buttons, ['Show Log']);
        assert.equal((await screen()).status, 'TensorRT succeeded');
        // A hit ends at once: its progress notification must not stay behind.
        await until('the progress notification to close', async () => !(await screen()).toasts.some((t) => t.buttons.includes('Cancel')), 5000);
        await browser.screenshot('engine-cache-hit');
        await vscode.commands.executeCommand('trtwatch.showLog');
        await until('the reuse in the output panel', async () => /reused the engine built \d+ seconds? ago in /.test(await outputText()));
      } finally {
        await setSetting('binaryPath', config.bin);
        await setSetting('buildOptions', undefined);
      }
    },
  },
];
