import type { ExecResult, Sandbox } from '../../sandbox/sandbox.js';
import type { ChannelPaths } from './python-module.js';

/** A request the script sent: a tool call, or the note that it is done. */
export type ChannelRequest = { done: true } | { tool: string; arguments: Record<string, unknown> };

/**
 * The harness's end of the script's tool channel: two FIFOs in the sandbox folder, reached only
 * through `sandbox.exec`, so it works wherever commands run (the local folder, a bwrap
 * namespace, a container). One exec per exchange writes the previous answer into the
 * responses FIFO and reads the next request from the requests FIFO.
 */
export class ToolChannel {
  constructor(
    private readonly sandbox: Sandbox,
    private readonly paths: ChannelPaths,
  ) {}

  /** The first request, or the next one after answering the last; undefined when the script ended without saying so. */
  async next(answer: unknown | undefined, signal: AbortSignal): Promise<ChannelRequest | undefined> {
    const read = `cat ${this.paths.requests}`;
    const command = answer === undefined ? read : `cat > ${this.paths.responses} && ${read}`;
    let result: ExecResult;
    try {
      result = await this.sandbox.exec(command, {
        stdin: answer === undefined ? undefined : JSON.stringify(answer),
        signal,
        timeoutMs: 3_600_000,
      });
    } catch (error) {
      if (signal.aborted) return undefined;
      throw error;
    }
    if (result.aborted || result.exitCode !== 0 || result.stdout.trim() === '') return undefined;
    return JSON.parse(result.stdout.trim().split('\n').pop()!) as ChannelRequest;
  }
}
