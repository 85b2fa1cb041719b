// TEST DOUBLE of the `vscode` module: a recording stand-in for the few VS Code calls
// the extension's controller makes (window.withProgress, status bar, tree view, output
// channel, messages, setContext). It is not VS Code: it records what the controller
// asked for, so that the integration test can check it, and lets the test press the
// notification's Cancel. test/use_vscode_double.ts routes require('vscode') here.

/* eslint-disable @typescript-eslint/no-explicit-any */

export interface Recorded {
  call: string;
  args: unknown[];
}

// Everything the controller did, in order.
export const calls: Recorded[] = [];
function record(call: string, ...args: unknown[]): void {
  calls.push({ call, args });
}

export function reset(): void {
  calls.length = 0;
  settings.clear();
  notifications.length = 0;
  messages.length = 0;
  outputLines.length = 0;
}

export enum StatusBarAlignment { Left = 1, Right = 2 }
export enum ProgressLocation { SourceControl = 1, Window = 10, Notification = 15 }
export enum TreeItemCollapsibleState { None = 0, Collapsed = 1, Expanded = 2 }

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string;
  iconPath?: ThemeIcon;
  constructor(readonly label: string, readonly collapsibleState?: TreeItemCollapsibleState) {}
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  readonly event = (listener: (e: T) => void) => {
    this.listeners.push(listener);
    return { dispose: () => { this.listeners = this.listeners.filter((l) => l !== listener); } };
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
}

// One window.withProgress notification: its options, every report, and its Cancel.
export interface Notification {
  title: string;
  cancellable: boolean;
  reports: { message?: string; increment?: number }[];
  done: boolean;
  pressCancel(): void;
}
export const notifications: Notification[] = [];

export interface ShownMessage {
  severity: 'information' | 'warning' | 'error';
  text: string;
  actions: string[];
}
export const messages: ShownMessage[] = [];
// What the "user" answers to the next message with these actions (undefined: dismiss).
export let answer: (m: ShownMessage) => string | undefined = () => undefined;
export function setAnswer(f: (m: ShownMessage) => string | undefined): void {
  answer = f;
}

export const outputLines: string[] = [];

function show(severity: ShownMessage['severity'], text: string, ...actions: string[]): Promise<string | undefined> {
  const m = { severity, text, actions };
  messages.push(m);
  record(`window.show${severity}Message`, text, actions);
  return Promise.resolve(answer(m));
}

export const statusBar = { text: '', tooltip: '' as string | undefined, visible: false, texts: [] as string[] };
export const treeView = { message: undefined as string | undefined, description: undefined as string | undefined, messages: [] as (string | undefined)[] };
export let treeProvider: any;

export const window = {
  createOutputChannel(name: string) {
    record('window.createOutputChannel', name);
    return {
      name,
      appendLine(line: string) { outputLines.push(line); },
      show() { record('outputChannel.show'); },
      dispose() {},
    };
  },
  createStatusBarItem(alignment: StatusBarAlignment, priority: number) {
    record('window.createStatusBarItem', alignment, priority);
    return {
      get text() { return statusBar.text; },
      set text(t: string) { statusBar.text = t; statusBar.texts.push(t); },
      get tooltip() { return statusBar.tooltip; },
      set tooltip(t: string | undefined) { statusBar.tooltip = t; },
      command: undefined as string | undefined,
      show() { statusBar.visible = true; },
      hide() { statusBar.visible = false; },
      dispose() {},
    };
  },
  createTreeView(id: string, options: { treeDataProvider: unknown }) {
    record('window.createTreeView', id);
    treeProvider = options.treeDataProvider;
    return {
      get message() { return treeView.message; },
      set message(m: string | undefined) { treeView.message = m; treeView.messages.push(m); },
      get description() { return treeView.description; },
      set description(d: string | undefined) { treeView.description = d; },
      dispose() {},
    };
  },
  async withProgress<R>(options: { location: ProgressLocation; title?: string; cancellable?: boolean },
                        task: (progress: { report(v: { message?: string; increment?: number }): void }, token: unknown) => Promise<R>): Promise<R> {
    record('window.withProgress', options);
    const source = new CancellationTokenSource();
    const n: Notification = {
      title: options.title ?? '', cancellable: options.cancellable === true, reports: [], done: false,
      pressCancel: () => source.cancel(),
    };
    notifications.push(n);
    try {
      return await task({ report: (v) => { n.reports.push({ ...v }); } }, source.token);
    } finally {
      n.done = true;
    }
  },
  showInformationMessage: (text: string, ...actions: string[]) => show('information', text, ...actions),
  showWarningMessage: (text: string, ...actions: string[]) => show('warning', text, ...actions),
  showErrorMessage: (text: string, ...actions: string[]) => show('error', text, ...actions),
};

export const context: Record<string, unknown> = {};

export const commands: Record<string, (...args: any[]) => unknown> = {
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    record('commands.executeCommand', command, ...args);
    if (command === 'setContext') context[String(args[0])] = args[1];
    return Promise.resolve(undefined);
  },
};

// --- what activate() and the task provider use ---

export const registeredCommands = new Map<string, (...args: any[]) => unknown>();
export const taskProviders = new Map<string, any>();
// Settings the "user" has set, by full key ("trtwatch.binaryPath"); others read as defaults.
export const settings = new Map<string, unknown>();

commands.registerCommand = (id: string, fn: (...args: any[]) => unknown) => {
  record('commands.registerCommand', id);
  registeredCommands.set(id, fn);
  return { dispose: () => registeredCommands.delete(id) };
};

export const tasks = {
  registerTaskProvider(type: string, provider: unknown) {
    record('tasks.registerTaskProvider', type);
    taskProviders.set(type, provider);
    return { dispose: () => taskProviders.delete(type) };
  },
};

export const workspace = {
  workspaceFolders: undefined as { uri: { fsPath: string } }[] | undefined,
  getConfiguration(section: string) {
    return {
      get<T>(key: string, fallback: T): T {
        const full = `${section}.${key}`;
        return settings.has(full) ? (settings.get(full) as T) : fallback;
      },
    };
  },
  getWorkspaceFolder() { return undefined; },
};

export enum TaskScope { Global = 1, Workspace = 2 }
export const TaskGroup = { Build: { id: 'build' } };

export class CustomExecution {
  constructor(readonly callback: (resolved: unknown) => Promise<any>) {}
}

export class Task {
  group?: unknown;
  constructor(readonly definition: Record<string, unknown>, readonly scope: unknown, readonly name: string,
              readonly source: string, readonly execution?: CustomExecution, readonly problemMatchers?: string | string[]) {}
}
