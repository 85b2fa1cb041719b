// The workbench suite's entry point: the smoke-test driver loads this module in the
// real extension host (extensionTestsPath) and calls run(); a throw is exit code 1.

import { tests as buildView } from './build_view.test';
import { tests as extension } from './extension.test';
import { runSuite } from './harness';
import { stopLeftoverBuild } from './workbench';

export function run(): Promise<void> {
  return runSuite([...extension.slice(0, 1), ...buildView, ...extension.slice(1)], stopLeftoverBuild);
}
