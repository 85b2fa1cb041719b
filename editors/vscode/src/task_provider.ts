// `"type": "trtwatch"` tasks: a build as a VS Code task. The task runs through the same
// controller as the commands (notification, tree, status bar, Stop), its terminal shows
// the plain log, and a failure ends with a "MODEL.onnx: error: ..." line for the
// `$trtwatch` problem matcher (package.json). Closing the terminal is Stop.

import * as path from 'path';
import * as vscode from 'vscode';
import { BuildSettings, PROFILES, TrtwatchTaskDefinition, exitCodeFor, taskArgs } from './build_args';
import { CliSource } from './cli_source';
import { BuildController } from './controller';

const CLOSE_DELAY_MS = 500;

class BuildTaskTerminal implements vscode.Pseudoterminal {
  private readonly written = new vscode.EventEmitter<string>();
  private readonly closed = new vscode.EventEmitter<number>();
  readonly onDidWrite = this.written.event;
  readonly onDidClose = this.closed.event;
  private running = false;

  constructor(private readonly controller: BuildController, private readonly title: string,
              private readonly source: CliSource, private readonly model: string | undefined) {}

  open(): void {
    this.running = true;
    const write = (line: string) => this.written.fire(line.replace(/\r?\n/g, '\r\n') + '\r\n');
    void this.controller.run(this.title, this.source, this.source.commandLine, write).then((outcome) => {
      this.running = false;
      if (outcome.state === 'failed' && this.model) write(`${this.model}: error: ${outcome.summary}`);
      // The terminal parses what was written asynchronously, and the problem matcher stops
      // with the task: closing at once can lose the last line, the one it matches.
      setTimeout(() => this.closed.fire(exitCodeFor(outcome.state)), CLOSE_DELAY_MS);
    });
  }

  close(): void {
    if (this.running) this.controller.cancel();
  }
}

export class TrtwatchTaskProvider implements vscode.TaskProvider {
  static readonly type = 'trtwatch';

  constructor(private readonly controller: BuildController, private readonly settings: () => BuildSettings) {}

  provideTasks(): vscode.Task[] {
    return PROFILES.map((profile) => this.make({ type: 'trtwatch', simulate: profile }, vscode.TaskScope.Workspace))
      .filter((t): t is vscode.Task => t !== undefined);
  }

  resolveTask(task: vscode.Task): vscode.Task | undefined {
    return this.make(task.definition as TrtwatchTaskDefinition, task.scope ?? vscode.TaskScope.Workspace);
  }

  private make(def: TrtwatchTaskDefinition, scope: vscode.WorkspaceFolder | vscode.TaskScope): vscode.Task | undefined {
    const args = taskArgs(def, this.settings());
    if (typeof args === 'string') {
      void vscode.window.showErrorMessage(`tasks.json: ${args}`);
      return undefined;
    }
    const cwd = typeof scope === 'object' ? scope.uri.fsPath : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const name = def.simulate ? `simulate ${def.simulate}` : `build ${def.model}`;
    const title = def.simulate ? `Simulated build (${def.simulate})` : `Build ${path.basename(def.model ?? '')}`;
    const execution = new vscode.CustomExecution(async () =>
      new BuildTaskTerminal(this.controller, title, new CliSource(this.settings().binaryPath, args, cwd), def.model));
    const task = new vscode.Task(def, scope, name, 'trtwatch', execution, '$trtwatch');
    task.group = vscode.TaskGroup.Build;
    return task;
  }
}
