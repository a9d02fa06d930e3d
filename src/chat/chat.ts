import type { AgentResult } from '../agent/result.js';
import { errorMessage } from '../errors.js';
import { ChatSession, type ChatServices, type ChatSettings } from './chat-session.js';
import type { LineInput } from './line-input.js';
import { TurnRenderer, type Output } from './renderer.js';
import { oneLine, type Style } from './style.js';

export interface ChatOptions {
  settings: ChatSettings;
  services: ChatServices;
  session: ChatSession;
  input: LineInput;
  output: Output;
  style: Style;
  /** Folder of run stores for /fork (default `checkpoints`). */
  checkpointsDir: string;
}

/**
 * The state of one `traj chat` process: the current session, the settings the next session
 * starts with, the turn in progress (so Ctrl-C can interrupt it) and the display switches.
 */
export class Chat {
  session: ChatSession;
  readonly settings: ChatSettings;
  readonly services: ChatServices;
  readonly input: LineInput;
  readonly style: Style;
  readonly checkpointsDir: string;
  showReasoning = true;
  /** Set by a first Ctrl-C at an empty prompt; the next one quits. */
  quitArmed = false;
  private readonly output: Output;
  private readonly renderer: TurnRenderer;
  private turn: AbortController | undefined;

  constructor(options: ChatOptions) {
    this.session = options.session;
    this.settings = options.settings;
    this.services = options.services;
    this.input = options.input;
    this.output = options.output;
    this.style = options.style;
    this.checkpointsDir = options.checkpointsDir;
    this.renderer = new TurnRenderer(this.output, this.style, () => this.showReasoning);
  }

  print(text = ''): void {
    this.output.write(`${text}\n`);
  }

  /** Abort the turn in progress (its tools get "[interrupted]" results); false when none is running. */
  interrupt(): boolean {
    if (!this.turn) return false;
    if (!this.turn.signal.aborted) {
      this.renderer.note(this.style.yellow('^C interrupting the turn…'));
      this.turn.abort(new Error('interrupted by the user'));
    }
    return true;
  }

  /** One agent run over the session: `text` as the new user message, or none to continue. */
  async runTurn(text: string | undefined): Promise<AgentResult | undefined> {
    const controller = new AbortController();
    this.turn = controller;
    try {
      if (text !== undefined) await this.checkpoint(text);
      const result = await this.session.send(text, {
        signal: controller.signal,
        onEvent: (event) => this.renderer.onEvent(event),
      });
      this.renderer.finish(result);
      return result;
    } catch (error) {
      this.print(this.style.red(`error: ${errorMessage(error)}`));
      return undefined;
    } finally {
      this.turn = undefined;
    }
  }

  /** The workspace before a message, for /rollback; a failed copy is said, never fatal to the turn. */
  private async checkpoint(text: string): Promise<void> {
    const checkpoints = this.services.checkpoints;
    if (!checkpoints) return;
    try {
      const taken = await checkpoints.take(oneLine(text, 60));
      if (taken.skipped) this.print(this.style.dim(`no checkpoint for /rollback ${taken.turn}: ${taken.skipped}`));
    } catch (error) {
      this.print(this.style.yellow(`no checkpoint for this message: ${errorMessage(error)}`));
    }
  }

  /** Switch to another session (after /reset, /resume or /fork) and say which. */
  useSession(session: ChatSession, how: string): void {
    // The session left behind keeps its history in the store, but not its browser.
    if (session !== this.session) void this.session.dispose();
    this.session = session;
    this.print(
      this.style.dim(
        `${how}: session ${session.id} · model ${session.endpoint.model} · toolsets ${session.toolsets.join(', ') || '(none)'}`,
      ),
    );
  }

  async newSession(): Promise<ChatSession> {
    return ChatSession.start(this.settings, this.services);
  }

  prompt(): string {
    return this.style.enabled ? this.style.bold(this.style.cyan('› ')) : '> ';
  }
}
