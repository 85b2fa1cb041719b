// The live phase tree as a VS Code tree view: one item per phase instance, nested as
// TensorRT nested them, with steps done and per-phase elapsed time. The running phases
// are expanded; a finished phase folds away with its ✓. (No reveal() of the newest
// phase: in VS Code 1.139 a reveal during refreshes fails to resolve the rows it walks
// and cancels the refresh, which leaves the rows stale.)

import * as vscode from 'vscode';
import { BuildView, PhaseNode, describePhase } from './build_view';

// VS Code's extension host collects a tree's change events and passes them on once none
// has come for 200 ms: a provider that fires on every event of a busy build is never
// redrawn while the build runs. This one fires at most every TREE_REFRESH_MS, and once
// more after the last change, so that every refresh gets through. Nor does it fire while
// VS Code is still fetching the rows of the last one (until it has asked for none for
// QUIET_MS): a refresh throws the extension host's rows away, and the fetches in flight
// then fail ("Cannot resolve tree item"), which cancels the refresh and leaves stale rows.
export const TREE_REFRESH_MS = 500;
const QUIET_MS = 250;
const MAX_WAIT_MS = 2000;  // a view that keeps asking is refreshed anyway after this

export class PhaseTreeProvider implements vscode.TreeDataProvider<PhaseNode> {
  private readonly changed = new vscode.EventEmitter<PhaseNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: BuildView | undefined;
  private now = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private firedAt = -Infinity;
  private askedAt = -Infinity;  // when VS Code last fetched rows

  // Shows `view` at build time `now` (seconds), at the next refresh.
  show(view: BuildView | undefined, now: number): void {
    this.view = view;
    this.now = now;
    this.schedule(this.firedAt + TREE_REFRESH_MS - Date.now());
  }

  private schedule(delayMs: number): void {
    this.timer ??= setTimeout(() => this.refresh(), Math.max(0, delayMs));
  }

  private refresh(): void {
    this.timer = undefined;
    const now = Date.now();
    if (now - this.askedAt < QUIET_MS && now - this.firedAt < MAX_WAIT_MS) {
      this.schedule(QUIET_MS);
      return;
    }
    this.firedAt = now;
    this.changed.fire();
  }

  getChildren(node?: PhaseNode): PhaseNode[] {
    this.askedAt = Date.now();
    if (!this.view) return [];
    return node ? node.children : this.view.roots;
  }

  getParent(node: PhaseNode): PhaseNode | undefined {
    return node.parent;
  }

  getTreeItem(node: PhaseNode): vscode.TreeItem {
    const item = new vscode.TreeItem(node.name, collapsibleState(node));
    // VS Code keeps an item's expansion by id: a finished phase gets a new one, so that it
    // folds away, while a running phase stays expanded.
    item.id = node.active ? `phase-${node.id}` : `phase-${node.id}-done`;
    item.description = describePhase(node, this.now);
    item.iconPath = new vscode.ThemeIcon(node.active ? 'sync~spin' : node.early ? 'circle-slash' : 'pass');
    item.tooltip = `${node.name}\n${item.description}${node.early ? '\nstopped before its last step' : ''}`;
    return item;
  }

  // Every row as VS Code is given it (getChildren / getTreeItem), depth first.
  rows(): PhaseRow[] {
    const out: PhaseRow[] = [];
    const walk = (node: PhaseNode, depth: number) => {
      const item = this.getTreeItem(node);
      out.push({ label: String(item.label), description: String(item.description ?? ''),
                 icon: (item.iconPath as vscode.ThemeIcon).id, depth });
      for (const child of this.getChildren(node)) walk(child, depth + 1);
    };
    for (const root of this.getChildren()) walk(root, 0);
    return out;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.changed.dispose();
  }
}

// A running phase is expanded from its start, also before its first child: VS Code takes
// an item's state only when it first sees the item, so a leaf that gains children later
// would stay closed over them.
function collapsibleState(node: PhaseNode): vscode.TreeItemCollapsibleState {
  if (node.active) return vscode.TreeItemCollapsibleState.Expanded;
  return node.children.length === 0 ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed;
}

export interface PhaseRow {
  label: string;
  description: string;  // "47/83 · 12.3 s"
  icon: string;         // codicon: sync~spin (running), pass (finished), circle-slash (stopped early)
  depth: number;        // 0: a top-level phase
}
