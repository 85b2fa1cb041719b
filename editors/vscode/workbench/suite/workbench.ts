// Reading what the user sees in the workbench (its DOM, through the driver), and the
// few VS Code calls the tests make to set things up.

import * as vscode from 'vscode';
import { browser, sleep, until } from './harness';

export const VIEW_NAME = 'TensorRT build';
export const EXTENSION_ID = 'trtwatch.trtwatch-vscode';

export interface DomRow {
  label: string;
  description: string;
  icon: string;   // the codicon: sync~spin, pass, circle-slash
  level: number;  // aria-level: 1 for a top-level phase
}

// A notification as the notification center shows it.
export interface Toast {
  message: string;
  buttons: string[];
  progress: number | undefined;  // the bar's width in %, when it is determinate
}

export interface Screen {
  rows: DomRow[];          // the view's rows that are rendered (the list is virtual)
  viewMessage: string;     // the view's message above its rows
  viewDescription: string; // the view header's description
  toasts: Toast[];
  status: string;          // the status bar item that starts with "TensorRT"
}

// Runs in the page: everything the tests look at, in one go.
function readScreen(viewName: string): Screen {
  const text = (e: Element | null | undefined) => (e?.textContent ?? '').trim();
  const pane = [...document.querySelectorAll('.pane')].find((p) => text(p.querySelector('.pane-header .title')).toLowerCase() === viewName.toLowerCase());
  // Not the sticky rows that repeat the parents of the rows scrolled under them.
  const rows = [...(pane?.querySelectorAll('.monaco-list-row:not(.monaco-tree-sticky-row)') ?? [])].map((r) => ({
    label: text(r.querySelector('.label-name')),
    description: text(r.querySelector('.label-description')),
    icon: /codicon-([\w~-]+)/.exec(r.querySelector('.custom-view-tree-node-item-icon')?.className ?? '')?.[1] ?? '',
    level: Number(r.getAttribute('aria-level')),
  }));
  const toasts = [...document.querySelectorAll('.notification-list-item')].map((t) => {
    const bar = (t.closest('.monaco-list-row, .notification-toast') ?? t.parentElement)?.querySelector('.monaco-progress-container');
    const bit = bar && !bar.classList.contains('infinite') ? bar.querySelector<HTMLElement>('.progress-bit') : null;
    return {
      message: text(t.querySelector('.notification-list-item-message')),
      buttons: [...t.querySelectorAll('.monaco-button')].map((b) => text(b)).filter((b) => b !== ''),
      progress: bit && bit.style.width ? parseFloat(bit.style.width) : undefined,
    };
  });
  const status = [...document.querySelectorAll('.statusbar-item')].map((s) => text(s)).find((s) => s.startsWith('TensorRT')) ?? '';
  return { rows, toasts, status, viewMessage: text(pane?.querySelector('.message')),
           viewDescription: text(pane?.querySelector('.pane-header .description')) };
}

export function screen(): Promise<Screen> {
  return browser.evaluate(readScreen, VIEW_NAME);
}

// Records the screen every 20 ms in the page, for states too short to poll (cancelling).
export function startRecording(): Promise<void> {
  return browser.evaluate(({ read, view }) => {
    const w = window as unknown as { trtwatchScreens: Screen[]; trtwatchTimer: number };
    const readIt = (0, eval)(`(${read})`) as (v: string) => Screen;
    w.trtwatchScreens = [];
    w.trtwatchTimer = window.setInterval(() => w.trtwatchScreens.push(readIt(view)), 20);
  }, { read: readScreen.toString(), view: VIEW_NAME });
}

export function stopRecording(): Promise<Screen[]> {
  return browser.evaluate(() => {
    const w = window as unknown as { trtwatchScreens: Screen[]; trtwatchTimer: number };
    window.clearInterval(w.trtwatchTimer);
    return w.trtwatchScreens;
  }, 0);
}

// Waits for a toast whose message matches; returns it.
export async function toast(what: RegExp, timeoutMs = 30000): Promise<Toast> {
  await showNotifications();
  return until(`a notification matching ${what}`, async () => (await screen()).toasts.find((t) => what.test(t.message)), timeoutMs);
}

// The extension's own API: the rows its tree data provider gives VS Code.
export interface TrtwatchApi {
  phaseTreeRows(): { label: string; description: string; icon: string; depth: number }[];
}

export async function extensionApi(): Promise<TrtwatchApi> {
  const ext = vscode.extensions.getExtension<TrtwatchApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not installed`);
  return ext.activate();
}

export function setSetting(key: string, value: unknown): Thenable<void> {
  return vscode.workspace.getConfiguration('trtwatch').update(key, value, vscode.ConfigurationTarget.Global);
}

// Shows the view (its rows render only while it is visible) with nothing else in the way,
// and the notification center, emptied. With the smoke-test driver on, VS Code shows no
// toasts (notificationsToasts.ts): every notification is in the center instead, the same
// item with its message, bar and buttons.
export async function showView(): Promise<void> {
  await vscode.commands.executeCommand('notifications.clearAll');
  await vscode.commands.executeCommand('workbench.action.closePanel');
  await vscode.commands.executeCommand('trtwatch.phases.focus');
  // The workspace's file tree folds away, so that the build's tree has the side bar's height.
  const folder = vscode.workspace.workspaceFolders?.[0].name ?? '';
  const open = await browser.evaluate((name) => [...document.querySelectorAll('.pane-header[aria-expanded="true"]')]
    .some((h) => h.querySelector('.title')?.textContent?.toLowerCase() === name.toLowerCase()), folder);
  if (open) await browser.click(`.pane-header[aria-expanded="true"]:has(.title:text-is("${folder}"))`);
}

// Opens the notification center once a notification is there (an empty one closes).
export async function showNotifications(): Promise<void> {
  await sleep(500);
  await vscode.commands.executeCommand('notifications.showList');
}

// The notification's phase path: [{name, count}], outermost first ("Building engine 2/6"),
// without the ETA after it (" · about 4–6 min left").
export function notificationPath(message: string): { name: string; count: string }[] {
  return message.split(' \u00b7 ')[0].split(' \u203a ').filter((p) => p.trim() !== '').map((p) => {
    const m = /^(.*?)(?: (\d+\/\d+))?$/.exec(p.trim())!;
    return { name: m[1], count: m[2] ?? '' };
  });
}

// Whether the view shows the notification's path, `levels` deep: each phase a running
// row at its depth, under the one before; the top-level phase with the same count.
export function showsPath(rows: DomRow[], message: string, levels: number): boolean {
  const path = notificationPath(message).slice(0, levels);
  if (path.length === 0) return false;
  let at = -1;
  return path.every((p, depth) => {
    const next = rows.findIndex((r, i) => i > at && r.level === depth + 1 && r.label === p.name && r.icon.startsWith('sync'));
    // Under the previous one: no row of its level or above between them.
    if (next < 0 || rows.slice(at + 1, next).some((r) => r.level <= depth)) return false;
    if (depth === 0 && !rows[next].description.startsWith(`${p.count} `)) return false;
    at = next;
    return true;
  });
}

// The status bar item's tooltip, as the hover shows it when the mouse is on the item.
export async function statusTooltip(): Promise<string> {
  await browser.hover('.statusbar-item:has-text("TensorRT")');
  const text = await until('the status bar item\'s hover', () => browser.evaluate(() =>
    document.querySelector('.workbench-hover, .monaco-hover:not(.hidden)')?.textContent?.trim() || undefined, 0), 5000);
  await browser.hover('.part.editor');  // the mouse away closes it (Escape would close the notifications too)
  return text;
}

// Stops a build a test left running and waits for its end.
export async function stopLeftoverBuild(): Promise<void> {
  if (!/^TensorRT \d/.test((await screen()).status)) return;
  await vscode.commands.executeCommand('trtwatch.cancel');
  await until('the leftover build to end', async () => !/^TensorRT \d/.test((await screen()).status), 30000);
}
