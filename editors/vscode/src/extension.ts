// Entry point: commands, the task provider, and settings -> build sources. The work is
// done by the trtwatch CLI (or service); this file only wires VS Code to it.

import * as path from 'path';
import * as vscode from 'vscode';
import { BuildSettings, PROFILES, QUICK_OPTIONS, enginePathFor, modelArgs, pickedArgs, simulateArgs } from './build_args';
import { CliSource } from './cli_source';
import { BuildController } from './controller';
import { PhaseRow } from './phase_tree';
import { RemoteSettings, RemoteSource, optionsForService } from './remote_source';
import { TrtwatchTaskProvider } from './task_provider';

export function readSettings(): BuildSettings {
  const c = vscode.workspace.getConfiguration('trtwatch');
  return {
    binaryPath: c.get<string>('binaryPath', 'trtwatch') || 'trtwatch',
    buildOptions: c.get<string[]>('buildOptions', []),
    timeout: c.get<string>('timeout', ''),
    killAfter: c.get<string>('killAfter', ''),
    stallTimeout: c.get<string>('stallTimeout', ''),
    simulateSpeed: c.get<number>('simulate.speed', 1),
    remoteUrl: c.get<string>('remote.url', ''),
  };
}

// The service's bearer token lives in VS Code's SecretStorage (the OS keychain, or the
// browser's encrypted store), never in settings files.
const TOKEN_SECRET = 'trtwatch.remote.token';

async function remoteSettings(secrets: vscode.SecretStorage, url: string): Promise<RemoteSettings> {
  const token = await secrets.get(TOKEN_SECRET);
  return token ? { url, token } : { url };
}

async function setToken(secrets: vscode.SecretStorage, given?: string): Promise<void> {
  const token = given ?? (await vscode.window.showInputBox({
    title: 'TensorRT: the build service\'s token', password: true, ignoreFocusOut: true,
    prompt: 'The content of the service\'s --token-file; kept in VS Code\'s secret storage. Empty: forget it.',
  }));
  if (token === undefined) return;
  if (token.trim() === '') {
    await secrets.delete(TOKEN_SECRET);
    void vscode.window.showInformationMessage('The build service token is forgotten.');
  } else {
    await secrets.store(TOKEN_SECRET, token.trim());
    void vscode.window.showInformationMessage('The build service token is stored in VS Code\'s secret storage.');
  }
}

// Versions up to 0.1 kept the token in the plain `trtwatch.remote.token` setting: move it.
async function migrateTokenSetting(secrets: vscode.SecretStorage): Promise<void> {
  const c = vscode.workspace.getConfiguration('trtwatch');
  const old = c.inspect<string>('remote.token');
  const value = old?.workspaceValue ?? old?.globalValue;
  if (!value) return;
  await secrets.store(TOKEN_SECRET, value.trim());
  if (old?.globalValue !== undefined) await c.update('remote.token', undefined, vscode.ConfigurationTarget.Global);
  if (old?.workspaceValue !== undefined) await c.update('remote.token', undefined, vscode.ConfigurationTarget.Workspace);
  void vscode.window.showInformationMessage('trtwatch moved the build service token from settings into VS Code\'s secret storage.');
}

function workspaceDir(uri?: vscode.Uri): string | undefined {
  const folder = uri ? vscode.workspace.getWorkspaceFolder(uri) : vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.fsPath;
}

// What activate() returns: the rows the tree view is given, for the workbench tests.
export interface TrtwatchApi {
  phaseTreeRows(): PhaseRow[];
}

export function activate(context: vscode.ExtensionContext): TrtwatchApi {
  const controller = new BuildController();
  const secrets = context.secrets;
  context.subscriptions.push(
    controller,
    vscode.commands.registerCommand('trtwatch.build', (uri?: vscode.Uri) => buildModel(controller, secrets, uri)),
    vscode.commands.registerCommand('trtwatch.simulate', (profile?: string) => simulate(controller, secrets, profile)),
    vscode.commands.registerCommand('trtwatch.watchRemote', (id?: string) => watchRemote(controller, secrets, id)),
    vscode.commands.registerCommand('trtwatch.setRemoteToken', (token?: string) => setToken(secrets, token)),
    vscode.commands.registerCommand('trtwatch.cancel', () => controller.cancel()),
    vscode.commands.registerCommand('trtwatch.showLog', () => controller.showLog()),
    vscode.tasks.registerTaskProvider(TrtwatchTaskProvider.type, new TrtwatchTaskProvider(controller, readSettings)),
  );
  void migrateTokenSetting(secrets);
  return { phaseTreeRows: () => controller.tree.rows() };
}

export function deactivate(): void {}

async function simulate(controller: BuildController, secrets: vscode.SecretStorage, given?: string): Promise<void> {
  const profile = given ?? (await vscode.window.showQuickPick([...PROFILES], { title: 'Simulate a TensorRT build (no GPU needed)' }));
  if (!profile) return;
  const s = readSettings();
  const title = `Simulated build (${profile})`;
  if (s.remoteUrl) {
    await controller.run(title, new RemoteSource(await remoteSettings(secrets, s.remoteUrl),
      { simulate: profile, speed: s.simulateSpeed, ...(s.timeout ? { timeout: s.timeout } : {}) }));
    return;
  }
  const source = new CliSource(s.binaryPath, simulateArgs(profile, s), workspaceDir());
  await controller.run(title, source, source.commandLine);
}

async function pickModel(): Promise<vscode.Uri | undefined> {
  const found = await vscode.workspace.findFiles('**/*.onnx', '**/node_modules/**', 500);
  if (found.length === 0) {
    void vscode.window.showWarningMessage('No .onnx model in this workspace. Open a folder with one, or try "TensorRT: Simulate a build".');
    return undefined;
  }
  const items = found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri }));
  return (await vscode.window.showQuickPick(items, { title: 'TensorRT: pick the ONNX model to build' }))?.uri;
}

async function buildModel(controller: BuildController, secrets: vscode.SecretStorage, given?: vscode.Uri): Promise<void> {
  const uri = given ?? (await pickModel());
  if (!uri) return;
  const s = readSettings();
  const items = QUICK_OPTIONS.map((o) => ({ label: o.flag, detail: o.detail, picked: s.buildOptions.includes(o.flag) }));
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true, title: `Build ${path.basename(uri.fsPath)}: options (more in the "trtwatch.buildOptions" setting)`,
  });
  if (!picked) return;
  const extra = s.buildOptions.filter((o) => !QUICK_OPTIONS.some((q) => q.flag === o));
  const flags = picked.map((p) => p.label);
  const title = `Build ${path.basename(uri.fsPath)}`;

  if (s.remoteUrl) {
    // The service resolves the model inside its --model-root (send the workspace-relative
    // path) and keeps its own engines; a local timing-cache path means nothing there.
    let serviceOptions: Record<string, string | boolean>;
    try {
      serviceOptions = optionsForService([...flags.filter((f) => f !== '--timing-cache'), ...extra]);
    } catch (e) {
      void vscode.window.showErrorMessage(`trtwatch.buildOptions: ${(e as Error).message}`);
      return;
    }
    const model = vscode.workspace.asRelativePath(uri, false);
    await controller.run(title, new RemoteSource(await remoteSettings(secrets, s.remoteUrl),
      { model, options: serviceOptions, ...(s.timeout ? { timeout: s.timeout } : {}) }));
    return;
  }
  const options = [...pickedArgs(flags, uri.fsPath), ...extra];
  const source = new CliSource(s.binaryPath, modelArgs(uri.fsPath, enginePathFor(uri.fsPath), options, s), workspaceDir(uri));
  await controller.run(title, source, source.commandLine);
}

async function watchRemote(controller: BuildController, secrets: vscode.SecretStorage, given?: string): Promise<void> {
  const s = readSettings();
  if (!s.remoteUrl) {
    void vscode.window.showErrorMessage('Set "trtwatch.remote.url" to the build service (e.g. http://gpu-host:8470) first.', 'Open Settings')
      .then((c) => c && vscode.commands.executeCommand('workbench.action.openSettings', 'trtwatch.remote'));
    return;
  }
  const id = given ?? (await vscode.window.showInputBox({ title: 'Watch a build on the service', prompt: 'Build id (b_…)' }));
  if (!id) return;
  await controller.run(`Remote build ${id.trim()}`, new RemoteSource(await remoteSettings(secrets, s.remoteUrl), { attach: id.trim() }));
}
