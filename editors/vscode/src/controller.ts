// Runs one build at a time from a BuildSource and keeps the editor's views in step with
// its events: a cancellable progress notification (message = phase path and ETA,
// increments = the top-level phase), a status bar item (elapsed, ETA, "last activity N s
// ago"), the phase tree view, and the output channel's plain log. Every Stop (the
// notification's Cancel, the tree view's Stop button, the command) goes through cancel().

import * as vscode from 'vscode';
import { BuildSource, SourceEnd } from './build_source';
import { BuildState, BuildView, estimateText, formatSeconds, notificationText, progressMessage, statusBarText, statusTitle, statusTooltip } from './build_view';
import { TrtEvent } from './events';
import { PhaseTreeProvider } from './phase_tree';

export const CANCELLING_MESSAGE = 'Cancelling \u2014 waiting for TensorRT to finish the current step';
export const BUILDING_CONTEXT = 'trtwatch.building';
export const TREE_VIEW_ID = 'trtwatch.phases';

// Views are redrawn at most this often while events pour in.
const RENDER_INTERVAL_MS = 100;

export interface BuildOutcome {
  state: BuildState;
  summary: string;     // the one line shown when the build ends
  unavailable: boolean; // the tool could not be started or reached
}

type Progress = vscode.Progress<{ message?: string; increment?: number }>;

class RunningBuild {
  readonly view = new BuildView();
  cancelRequested = false;
  progress: Progress | undefined;
  reportedPercent = 0;
  lastMessage = '';
  anchor: { wall: number; t: number }; // maps the wall clock onto build time (the newest event)
  constructor(readonly title: string, readonly source: BuildSource, startedWall: number) {
    this.anchor = { wall: startedWall, t: 0 };
  }
}

export class BuildController implements vscode.Disposable {
  readonly tree = new PhaseTreeProvider();
  private readonly treeView: vscode.TreeView<unknown>;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly output: vscode.OutputChannel;
  private current: RunningBuild | undefined;
  private renderTimer: ReturnType<typeof setTimeout> | undefined;
  private tickTimer: ReturnType<typeof setInterval> | undefined;
  private echo: ((line: string) => void) | undefined;

  constructor(private readonly clock: () => number = () => performance.now() / 1000) {
    this.output = vscode.window.createOutputChannel('TensorRT builds');
    this.statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.statusItem.command = 'trtwatch.showLog';
    this.treeView = vscode.window.createTreeView(TREE_VIEW_ID, { treeDataProvider: this.tree, showCollapseAll: true });
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  // Runs the build to its end; resolves with what the user was told. `echo` gets every
  // line of the log as well (a task's terminal).
  async run(title: string, source: BuildSource, commandLine?: string, echo?: (line: string) => void): Promise<BuildOutcome> {
    if (this.current) {
      const summary = 'A TensorRT build is already running; stop it first (TensorRT: Cancel build).';
      void vscode.window.showWarningMessage(summary);
      return { state: 'failed', summary, unavailable: true };
    }
    const build = new RunningBuild(title, source, this.clock());
    this.current = build;
    this.echo = echo;
    this.log(`=== ${title}`);
    if (commandLine) this.log(`$ ${commandLine}`);
    void vscode.commands.executeCommand('setContext', BUILDING_CONTEXT, true);
    this.tickTimer = setInterval(() => this.refresh(), 1000);
    this.render(build);
    this.statusItem.show();

    let end: SourceEnd = {};
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `TensorRT: ${title}`, cancellable: true },
      async (progress, token) => {
        build.progress = progress;
        token.onCancellationRequested(() => this.cancel());
        end = await source.run({
          onEvent: (e) => this.onEvent(build, e),
          onLog: (line) => this.log(line),
        });
      });
    return this.finish(build, end);
  }

  // The one cooperative cancel. A second request while cancelling asks whether to force.
  cancel(): void {
    const build = this.current;
    if (!build) {
      void vscode.window.showInformationMessage('No TensorRT build is running.');
      return;
    }
    if (build.cancelRequested) {
      void vscode.window.showWarningMessage(`${CANCELLING_MESSAGE}. ${build.source.forceHint}.`, 'Force stop').then((choice) => {
        if (choice === 'Force stop' && this.current === build) build.source.cancel(true);
      });
      return;
    }
    build.cancelRequested = true;
    this.log(`[trtwatch] stop requested: ${CANCELLING_MESSAGE}`);
    build.source.cancel(false);
    this.render(build);
  }

  // Redraws what time changes (elapsed, "last activity"); a 1 s timer calls it.
  refresh(): void {
    if (this.current) this.render(this.current);
  }

  private onEvent(build: RunningBuild, e: TrtEvent): void {
    build.view.apply(e);
    build.anchor = { wall: this.clock(), t: e.t };
    const line = logLine(e);
    if (line) this.log(line);
    // Structural changes and the end show at once; step updates at most every 100 ms.
    if (e.type === 'step') {
      this.renderTimer ??= setTimeout(() => {
        this.renderTimer = undefined;
        this.render(build);
      }, RENDER_INTERVAL_MS);
    } else {
      this.render(build);
    }
  }

  private buildNow(build: RunningBuild): number {
    return build.anchor.t + Math.max(0, this.clock() - build.anchor.wall);
  }

  // The state the user sees: cancelling from the moment Stop was pressed.
  private shownState(build: RunningBuild): BuildState {
    const s = build.view.state;
    return build.cancelRequested && (s === 'running' || s === 'starting') ? 'cancelling' : s;
  }

  private render(build: RunningBuild): void {
    if (this.current !== build) return;
    const view = build.view;
    const now = this.buildNow(build);
    const state = this.shownState(build);

    // Notification: path and ETA (or the cancelling notice), percentage of the top-level phase.
    const message = state === 'cancelling' ? `${CANCELLING_MESSAGE}\u2026` : progressMessage(view, state, now);
    const target = Math.max(build.reportedPercent, view.percent);
    const increment = target - build.reportedPercent;
    if (build.progress && (message !== build.lastMessage || increment >= 0.5)) {
      const shown = notificationText(message);
      build.progress.report(increment > 0 ? { message: shown, increment } : { message: shown });
      build.reportedPercent = target;
      build.lastMessage = message;
    }

    // Status bar: elapsed, state, ETA, silence; the tooltip says why there is no ETA.
    this.statusItem.text = statusBarText(view, state, now);
    this.statusItem.tooltip = statusTooltip(view, now);

    // Tree view.
    this.tree.show(view, now);
    this.treeView.description = `${statusTitle(state)} \u00b7 ${formatSeconds(now)}`;
    // Each message set is a tree change event (see TREE_REFRESH_MS): only when it changes.
    this.setTreeMessage(state === 'cancelling' ? `${CANCELLING_MESSAGE}\u2026` : undefined);
  }

  private finish(build: RunningBuild, end: SourceEnd): BuildOutcome {
    if (this.renderTimer) clearTimeout(this.renderTimer);
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.renderTimer = this.tickTimer = undefined;
    const view = build.view;
    const now = this.buildNow(build);
    this.tree.show(view, now);
    this.current = undefined;
    void vscode.commands.executeCommand('setContext', BUILDING_CONTEXT, false);

    const finish = view.finish;
    const state: BuildState = finish ? finish.status : end.status ?? 'failed';
    const unavailable = !finish && end.unavailable === true;
    let summary: string;
    if (finish) {
      for (const line of view.summaryLines(10)) this.log(line);
      summary = `${statusTitle(state)} after ${formatSeconds(finish.elapsed)}`;
      if (finish.error) summary += `: ${finish.error}`;
      if (state === 'cancelled' && finish.cancel_latency) {
        summary += ` (TensorRT stopped ${formatSeconds(finish.cancel_latency.to_return)} after the request)`;
      }
      // What the stream adds: "…; reused the engine built 3 days ago in 14m 02s (engine
      // cache, key …)", "…; took longer than any of the 7 earlier builds".
      for (const note of view.endNotes()) summary += `; ${note}`;
    } else {
      summary = `${statusTitle(state)}: ${end.message ?? 'trtwatch ended without a result'}`;
      this.log(summary);
    }
    if (finish && end.message && end.status !== finish.status) this.log(`[trtwatch] ${end.message}`);
    this.echo = undefined;

    this.statusItem.text = `${stateIcon(state)} TensorRT ${statusTitle(state).replace(/^Build /, '')}`;
    this.statusItem.tooltip = summary;
    this.treeView.description = statusTitle(state);
    this.setTreeMessage(summary);

    const text = notificationText(summary);
    if (unavailable) {
      void vscode.window.showErrorMessage(text, 'Open Settings', 'Show Log').then((choice) => this.followUp(choice));
    } else if (state === 'succeeded') {
      void vscode.window.showInformationMessage(`${build.title}: ${text}`, 'Show Log').then((choice) => this.followUp(choice));
    } else if (state === 'cancelled' || state === 'timed_out') {
      void vscode.window.showWarningMessage(`${build.title}: ${text}`, 'Show Log').then((choice) => this.followUp(choice));
    } else {
      void vscode.window.showErrorMessage(`${build.title}: ${text}`, 'Show Log').then((choice) => this.followUp(choice));
    }
    return { state, summary, unavailable };
  }

  private setTreeMessage(message: string | undefined): void {
    if (this.treeView.message !== message) this.treeView.message = message;
  }

  private followUp(choice: string | undefined): void {
    if (choice === 'Show Log') this.showLog();
    if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'trtwatch');
  }

  private log(line: string): void {
    this.output.appendLine(line);
    this.echo?.(line);
  }

  showLog(): void {
    this.output.show(true);
  }

  dispose(): void {
    this.current?.source.detach();
    if (this.renderTimer) clearTimeout(this.renderTimer);
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.treeView.dispose();
    this.tree.dispose();
    this.statusItem.dispose();
    this.output.dispose();
  }
}

function stateIcon(state: BuildState): string {
  switch (state) {
    case 'succeeded': return '$(pass)';
    case 'cancelled': return '$(circle-slash)';
    case 'timed_out': return '$(clock)';
    case 'failed': return '$(error)';
    default: return '$(sync~spin)';
  }
}

// The output channel's plain log line for an event (steps are left to the views).
export function logLine(e: TrtEvent): string | undefined {
  const at = `[${formatSeconds(e.t).padStart(8)}]`;
  switch (e.type) {
    case 'build_start': return `${at} build ${e.build} (${e.backend}${e.model ? `, ${e.model}` : ''})`;
    case 'phase_start': return `${at} start  ${e.phase}${e.total > 0 ? ` (${e.total} steps)` : ''}`;
    case 'phase_finish': return `${at} finish ${e.phase} ${e.completed}/${e.total} in ${formatSeconds(e.elapsed)}${e.early ? ' (stopped early)' : ''}`;
    case 'cancel_requested': return `${at} cancel requested (${e.reason}): ${e.message}`;
    case 'stall': return `${at} no progress for ${formatSeconds(e.silent_for)}`;
    case 'log': return `${at} ${e.severity}: ${e.message}`;
    case 'estimate': return `${at} ${estimateText(e, 0)}`;
    case 'build_finish': return `${at} ${statusTitle(e.status).toLowerCase()}${e.error ? `: ${e.error}` : ''}`;
    case 'step': return undefined;
  }
}
