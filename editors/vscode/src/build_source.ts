// Where a build's events come from: the local CLI (cli_source.ts) or a remote build
// service (remote_source.ts). The controller drives both the same way.

import { BuildStatus, TrtEvent } from './events';

export interface SourceListener {
  onEvent(event: TrtEvent): void;
  // A line for the output channel: the CLI's stderr, or what the source itself reports.
  onLog(line: string): void;
}

// How the source ended, beyond what build_finish said.
export interface SourceEnd {
  // The outcome when no build_finish arrived (the process died, the stream broke).
  status?: BuildStatus;
  // Why, for the user: "trtwatch exited with code 2: ...", "binary not found".
  message?: string;
  // True when the tool itself could not be started or reached: nothing was built.
  unavailable?: boolean;
}

export interface BuildSource {
  // Starts the build; resolves when the source is done (never rejects).
  run(listener: SourceListener): Promise<SourceEnd>;
  // The cooperative cancel (SIGINT to the CLI, POST /cancel to the service).
  // `force`: the second request, for a builder that does not reach a step boundary.
  cancel(force: boolean): void;
  // The editor is going away: a local build is cancelled (it would be orphaned), a build
  // on a service goes on and is only no longer watched.
  detach(): void;
  // What to tell the user while cancelling: how force works for this source.
  readonly forceHint: string;
}
