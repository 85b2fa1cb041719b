// Settings and choices -> the arguments of `trtwatch build`. Pure, unit-tested.

export const PROFILES = ['small-cnn', 'large-transformer', 'failing'] as const;

export interface BuildSettings {
  binaryPath: string;
  buildOptions: string[];  // extra `trtwatch build` flags for real builds, e.g. ["--fp16"]
  timeout: string;         // --timeout, "" for none
  killAfter: string;       // --kill-after, "" for none
  stallTimeout: string;    // --stall-timeout, "" for none
  simulateSpeed: number;   // --speed for simulated builds
  remoteUrl: string;       // "" builds locally (the token is in SecretStorage, not here)
}

export const DEFAULT_SETTINGS: BuildSettings = {
  binaryPath: 'trtwatch', buildOptions: [], timeout: '', killAfter: '', stallTimeout: '',
  simulateSpeed: 1, remoteUrl: '',
};

// Options every build gets from the settings: time budget and the cancel's hard limit.
export function commonArgs(s: BuildSettings): string[] {
  const args: string[] = [];
  if (s.timeout.trim()) args.push('--timeout', s.timeout.trim());
  if (s.killAfter.trim()) args.push('--kill-after', s.killAfter.trim());
  if (s.stallTimeout.trim()) args.push('--stall-timeout', s.stallTimeout.trim());
  return args;
}

export function simulateArgs(profile: string, s: BuildSettings): string[] {
  const args = ['--simulate', profile];
  if (s.simulateSpeed !== 1) args.push('--speed', String(s.simulateSpeed));
  return [...args, ...commonArgs(s)];
}

// model.onnx -> model: engines and timing caches go next to the model.
function modelStem(model: string): string {
  return model.replace(/\.onnx$/i, '');
}

export function enginePathFor(model: string): string {
  return modelStem(model) + '.engine';
}

export function modelArgs(model: string, engine: string, options: readonly string[], s: BuildSettings): string[] {
  return [model, '-o', engine, ...options, ...commonArgs(s)];
}

// The flags offered in the build command's quick pick (trtexec's names).
export const QUICK_OPTIONS: readonly { flag: string; detail: string }[] = [
  { flag: '--fp16', detail: 'allow FP16 kernels' },
  { flag: '--bf16', detail: 'allow BF16 kernels' },
  { flag: '--int8', detail: 'allow INT8 kernels' },
  { flag: '--stronglyTyped', detail: 'keep the network\'s own types' },
  { flag: '--timing-cache', detail: 'load and update MODEL.cache next to the model' },
];

// The picked flags as arguments; --timing-cache gets its file next to the model.
export function pickedArgs(picked: readonly string[], model: string): string[] {
  return picked.flatMap((flag) => (flag === '--timing-cache' ? [flag, modelStem(model) + '.cache'] : [flag]));
}

// A `"type": "trtwatch"` task of tasks.json (package.json taskDefinitions).
export interface TrtwatchTaskDefinition {
  type: 'trtwatch';
  model?: string;     // an .onnx path (relative to the workspace folder)
  output?: string;    // the engine; default: next to the model
  simulate?: string;  // a profile instead of a model
  options?: string[]; // more `trtwatch build` flags
}

// The `trtwatch build` arguments for a task, or why the definition is unusable.
export function taskArgs(def: TrtwatchTaskDefinition, s: BuildSettings): string[] | string {
  if (def.simulate && def.model) return 'a trtwatch task has either "model" or "simulate", not both';
  const options = Array.isArray(def.options) ? def.options.map(String) : [];
  if (def.simulate) return [...simulateArgs(def.simulate, s), ...options];
  if (def.model) return [def.model, '-o', def.output ?? enginePathFor(def.model), ...s.buildOptions, ...options, ...commonArgs(s)];
  return 'a trtwatch task needs "model" (an .onnx file) or "simulate" (a profile)';
}

// A task's exit code for a build's end: the CLI's own codes (README "Exit codes").
export function exitCodeFor(state: string): number {
  switch (state) {
    case 'succeeded': return 0;
    case 'timed_out': return 124;
    case 'cancelled': return 130;
    default: return 1;
  }
}
