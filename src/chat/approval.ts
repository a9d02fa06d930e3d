import { findDangerous, type DangerousPattern } from './dangerous-commands.js';

export type ApprovalAnswer = 'once' | 'session' | 'always' | 'deny';

/** Asks the user about one command; resolves 'deny' when the signal aborts or input ends. */
export type AskApproval = (
  command: string,
  patterns: readonly DangerousPattern[],
  signal: AbortSignal,
) => Promise<ApprovalAnswer>;

export interface ApprovalVerdict {
  allowed: boolean;
  /** The patterns the command matched (empty for a harmless command). */
  patterns: DangerousPattern[];
  answer?: ApprovalAnswer;
}

/** Read a typed answer: y/once, s/session, a/always; anything else (an empty line too) denies. */
export function parseApprovalAnswer(line: string | undefined): ApprovalAnswer {
  const answer = line?.trim().toLowerCase() ?? '';
  if (['y', 'yes', 'o', 'once'].includes(answer)) return 'once';
  if (['s', 'session'].includes(answer)) return 'session';
  if (['a', 'always'].includes(answer)) return 'always';
  return 'deny';
}

/**
 * Decides whether a terminal command may run: harmless commands and patterns approved for this
 * chat or always run at once; anything else is asked about, one question at a time (tool calls
 * of one turn run concurrently, but the user answers sequentially).
 */
export class CommandApprover {
  private readonly sessionApproved = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ask: AskApproval,
    private readonly always: { ids(): readonly string[]; add(id: string): void },
  ) {}

  async check(command: string, signal: AbortSignal): Promise<ApprovalVerdict> {
    const patterns = findDangerous(command);
    if (patterns.every((pattern) => this.isApproved(pattern.id))) return { allowed: true, patterns };
    const turn = this.queue.then(() => this.decide(command, patterns, signal));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private isApproved(id: string): boolean {
    return this.sessionApproved.has(id) || this.always.ids().includes(id);
  }

  private async decide(command: string, patterns: DangerousPattern[], signal: AbortSignal): Promise<ApprovalVerdict> {
    // An earlier question in the queue may have approved these patterns meanwhile.
    const open = patterns.filter((pattern) => !this.isApproved(pattern.id));
    if (open.length === 0) return { allowed: true, patterns };
    if (signal.aborted) return { allowed: false, patterns, answer: 'deny' };
    const answer = await this.ask(command, open, signal);
    if (answer === 'session') for (const pattern of open) this.sessionApproved.add(pattern.id);
    if (answer === 'always') for (const pattern of open) this.always.add(pattern.id);
    return { allowed: answer !== 'deny', patterns, answer };
  }
}
