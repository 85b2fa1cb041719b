// The live phase tree as a VS Code tree view: one item per phase instance, nested as
// TensorRT nested them, with steps done and per-phase elapsed time.

import * as vscode from 'vscode';
import { BuildView, PhaseNode, describePhase } from './build_view';

export class PhaseTreeProvider implements vscode.TreeDataProvider<PhaseNode> {
  private readonly changed = new vscode.EventEmitter<PhaseNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: BuildView | undefined;
  private now = 0;

  // Shows `view` at build time `now` (seconds).
  show(view: BuildView | undefined, now: number): void {
    this.view = view;
    this.now = now;
    this.changed.fire();
  }

  getChildren(node?: PhaseNode): PhaseNode[] {
    if (!this.view) return [];
    return node ? node.children : this.view.roots;
  }

  getParent(node: PhaseNode): PhaseNode | undefined {
    return node.parent;
  }

  getTreeItem(node: PhaseNode): vscode.TreeItem {
    const item = new vscode.TreeItem(node.name,
      node.children.length === 0 ? vscode.TreeItemCollapsibleState.None
        : node.active ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `phase-${node.id}`;
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
    this.changed.dispose();
  }
}

export interface PhaseRow {
  label: string;
  description: string;  // "47/83 · 12.3 s"
  icon: string;         // codicon: sync~spin (running), pass (finished), circle-slash (stopped early)
  depth: number;        // 0: a top-level phase
}
