// The controller's time-dependent views on a simulated clock: elapsed time and
// "last activity N s ago" in the status bar, per-phase elapsed in the tree. Events come
// from a scripted source (the real binary is exercised in controller.integration.test.ts).

import './use_vscode_double';

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { BuildSource, SourceEnd, SourceListener } from '../src/build_source';
import { BuildController } from '../src/controller';
import { TrtEvent } from '../src/events';
import * as vscode from './vscode_double';

// Emits the events it is given when told to; ends when told to.
class ScriptedSource implements BuildSource {
  readonly forceHint = 'n/a';
  listener: SourceListener | undefined;
  cancels: boolean[] = [];
  private end: ((e: SourceEnd) => void) | undefined;
  run(listener: SourceListener): Promise<SourceEnd> {
    this.listener = listener;
    return new Promise((resolve) => { this.end = resolve; });
  }
  emit(e: TrtEvent): void {
    this.listener?.onEvent(e);
  }
  finish(end: SourceEnd): void {
    this.end?.(end);
  }
  cancel(force: boolean): void {
    this.cancels.push(force);
  }
  detach(): void {}
}

test('status bar: build time, then "last activity N s ago" after 3 s of silence; tree: per-phase elapsed', async () => {
  vscode.reset();
  let now = 100; // wall-clock seconds, moved by the test
  const controller = new BuildController(() => now);
  const source = new ScriptedSource();
  const running = controller.run('Scripted', source);
  await new Promise((r) => setImmediate(r));

  source.emit({ v: 1, seq: 1, t: 0, type: 'build_start', build: 'b_1', backend: 'tensorrt', model: 'm.onnx', facts: {} });
  source.emit({ v: 1, seq: 2, t: 0.5, type: 'phase_start', id: 1, parent: null, phase: 'Building engine', total: 6 });
  source.emit({ v: 1, seq: 3, t: 1, type: 'phase_start', id: 2, parent: 1, phase: 'Timing graph nodes', total: 83 });
  assert.equal(vscode.statusBar.text, '$(sync~spin) TensorRT 1.0 s');

  now += 2; // 2 s of silence: not yet worth mentioning
  controller.refresh();
  assert.equal(vscode.statusBar.text, '$(sync~spin) TensorRT 3.0 s');
  now += 40;
  controller.refresh();
  assert.equal(vscode.statusBar.text, '$(sync~spin) TensorRT 43.0 s \u00b7 last activity 42 s ago');
  const root = vscode.treeProvider.getChildren()[0];
  assert.equal(vscode.treeProvider.getTreeItem(root).description, '0/6 \u00b7 42.5 s');
  assert.equal(vscode.treeProvider.getTreeItem(root.children[0]).description, '0/83 \u00b7 42.0 s');

  controller.cancel();
  assert.deepEqual(source.cancels, [false], 'the first Stop is the cooperative cancel');
  assert.match(vscode.statusBar.text, /cancelling \u00b7 last activity 42 s ago$/);

  source.emit({ v: 1, seq: 4, t: 43, type: 'cancel_requested', reason: 'signal', message: 'interrupted (SIGINT)' });
  source.emit({ v: 1, seq: 5, t: 44, type: 'build_finish', status: 'cancelled', error: 'interrupted (SIGINT)', elapsed: 44,
                cancel_latency: { to_first_false: 0.5, to_return: 1 }, phases: [], dropped: 0 });
  source.finish({ status: 'cancelled', message: 'cancelled (SIGINT)' });
  const outcome = await running;
  assert.equal(outcome.state, 'cancelled');
  assert.equal(vscode.statusBar.text, '$(circle-slash) TensorRT cancelled');
  controller.dispose();
});
