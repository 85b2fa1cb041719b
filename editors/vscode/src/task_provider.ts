// `"type": "trtwatch"` tasks: a build as a VS Code task, run by the CLI in the task's
// terminal (its own live view, Ctrl+C included), failures reported by the `$trtwatch`
// problem matcher (package.json) from the CLI's "error:" lines.

import * as vscode from 'vscode';
import { BuildSettings, PROFILES, TrtwatchTaskDefinition, taskArgs } from './build_args';

export class TrtwatchTaskProvider implements vscode.TaskProvider {
  static readonly type = 'trtwatch';

  constructor(private readonly settings: () => BuildSettings) {}

  provideTasks(): vscode.Task[] {
    return PROFILES.map((profile) => this.make({ type: 'trtwatch', simulate: profile }, vscode.TaskScope.Workspace))
      .filter((t): t is vscode.Task => t !== undefined);
  }

  resolveTask(task: vscode.Task): vscode.Task | undefined {
    const def = task.definition as TrtwatchTaskDefinition;
    return this.make(def, task.scope ?? vscode.TaskScope.Workspace);
  }

  private make(def: TrtwatchTaskDefinition, scope: vscode.WorkspaceFolder | vscode.TaskScope): vscode.Task | undefined {
    const s = this.settings();
    const args = taskArgs(def, s);
    if (typeof args === 'string') {
      void vscode.window.showErrorMessage(`tasks.json: ${args}`);
      return undefined;
    }
    const name = def.simulate ? `simulate ${def.simulate}` : `build ${def.model}`;
    const task = new vscode.Task(def, scope, name, 'trtwatch',
      new vscode.ProcessExecution(s.binaryPath, ['build', ...args]), '$trtwatch');
    task.group = vscode.TaskGroup.Build;
    return task;
  }
}
