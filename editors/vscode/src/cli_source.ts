// A build run by the local `trtwatch build ... --progress json`: events from its
// stdout, its stderr into the log, Stop as SIGINT (the CLI's Ctrl+C), and its exit code
// (README "Exit codes") when the stream ends without a build_finish.

import { spawn } from 'child_process';
import { BuildSource, SourceEnd, SourceListener } from './build_source';
import { LineSplitter, parseEvent } from './events';

export const INSTALL_HINT =
  'Build trtwatch (scripts/setup.sh, or `cmake --preset release && cmake --build --preset release`; the binary is build/trtwatch) ' +
  'and set "trtwatch.binaryPath" to it, or put trtwatch on PATH.';

// Exit codes the CLI documents; what each means when no build_finish was seen.
export function describeExit(code: number | null, signal: string | null): SourceEnd {
  if (signal) return { status: 'failed', message: `trtwatch was killed by ${signal}` };
  switch (code) {
    case 0: return { status: 'succeeded' };
    case 1: return { status: 'failed', message: 'the build failed' };
    case 2: return { status: 'failed', message: 'usage or input error: nothing was built', unavailable: true };
    case 124: return { status: 'timed_out', message: 'the build timed out' };
    case 130: return { status: 'cancelled', message: 'cancelled (SIGINT)' };
    case 137: return { status: 'cancelled', message: 'trtwatch stopped waiting for the builder (--kill-after)' };
    case 143: return { status: 'cancelled', message: 'cancelled (SIGTERM or SIGHUP)' };
    default: return { status: 'failed', message: `trtwatch exited with code ${code}` };
  }
}

// "usage or input error: nothing was built" + what trtwatch said, so the user need not open the log.
function withReason(end: SourceEnd, reason: string): SourceEnd {
  return reason && end.message ? { ...end, message: `${end.message}: ${reason.replace(/^trtwatch \w+: /, '')}` } : end;
}

export class CliSource implements BuildSource {
  readonly forceHint = 'Stop again to force (trtwatch exits at once, 130)';
  private child: ReturnType<typeof spawn> | undefined;
  private signalsSent = 0;

  // `args` are the build's own arguments (after `trtwatch build`); --progress json is added.
  constructor(private readonly binary: string, private readonly args: readonly string[], private readonly cwd?: string) {}

  get commandLine(): string {
    return [this.binary, ...this.fullArgs()].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  }

  private fullArgs(): string[] {
    return ['build', ...this.args, '--progress', 'json'];
  }

  run(listener: SourceListener): Promise<SourceEnd> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (end: SourceEnd) => {
        if (!settled) {
          settled = true;
          resolve(end);
        }
      };
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(this.binary, this.fullArgs(), { cwd: this.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        finish({ status: 'failed', unavailable: true, message: `cannot start trtwatch ("${this.binary}"): ${String(e)}. ${INSTALL_HINT}` });
        return;
      }
      this.child = child;
      const stdout = new LineSplitter((line) => {
        if (line.trim() === '') return;
        const parsed = parseEvent(line);
        if (parsed.ok) listener.onEvent(parsed.event);
        else listener.onLog(`[trtwatch extension] ignored a line of trtwatch's output: ${parsed.error}`);
      });
      let lastError = '';  // the CLI's last stderr line: why an input error (exit 2) was one
      const stderr = new LineSplitter((line) => {
        if (line.trim() !== '') lastError = line.trim();
        listener.onLog(line);
      });
      child.stdout?.on('data', (b: Buffer) => stdout.push(b));
      child.stderr?.on('data', (b: Buffer) => stderr.push(b));
      child.on('error', (err: NodeJS.ErrnoException) => {
        this.child = undefined;
        if (err.code === 'ENOENT') {
          finish({ status: 'failed', unavailable: true, message: `trtwatch not found: "${this.binary}" does not exist or is not on PATH. ${INSTALL_HINT}` });
        } else if (err.code === 'EACCES') {
          finish({ status: 'failed', unavailable: true, message: `trtwatch cannot be run: "${this.binary}" is not executable. ${INSTALL_HINT}` });
        } else {
          finish({ status: 'failed', unavailable: true, message: `cannot start trtwatch ("${this.binary}"): ${err.message}` });
        }
      });
      // 'close' comes after both pipes are drained, so every event has been delivered.
      child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
        stdout.end();
        stderr.end();
        this.child = undefined;
        finish(withReason(describeExit(code, signal), code === 2 ? lastError : ''));
      });
    });
  }

  detach(): void {
    this.cancel(false);
  }

  cancel(force: boolean): void {
    // The first SIGINT cancels cooperatively; the CLI takes a second one as "force".
    if (!this.child || this.child.exitCode !== null) return;
    if (this.signalsSent === 0 || force) {
      this.signalsSent++;
      this.child.kill('SIGINT');
    }
  }
}
