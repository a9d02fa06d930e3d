import type { AgentEvent } from '../agent/events.js';
import type { AgentResult } from '../agent/result.js';
import type { ToolCallInput, ToolCallOutcome } from '../tools/execute-tool-call.js';
import { oneLine, type Style } from './style.js';

export interface Output {
  write(text: string): void;
}

const ARGUMENTS_WIDTH = 120;
const RESULT_WIDTH = 160;

/**
 * Shows one agent run as it happens: reasoning (dimmed, when shown) and content as their deltas
 * arrive, a line when each tool call starts and one when it ends.
 */
export class TurnRenderer {
  private atLineStart = true;
  private section: 'none' | 'reasoning' | 'content' = 'none';
  private streamed = { reasoning: false, content: false };

  constructor(
    private readonly output: Output,
    private readonly style: Style,
    private readonly showReasoning: () => boolean,
  ) {}

  onEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'model_start':
        this.streamed = { reasoning: false, content: false };
        break;
      case 'model_delta':
        if (event.delta.type === 'reasoning') this.reasoning(event.delta.text);
        else if (event.delta.type === 'content') this.content(event.delta.text);
        break;
      case 'model_end': {
        // A response that arrived without deltas (a non-streaming fallback) is shown whole.
        const { message } = event.response;
        if (!this.streamed.reasoning && message.reasoning) this.reasoning(message.reasoning);
        if (!this.streamed.content && message.content) this.content(message.content);
        this.endLine();
        this.section = 'none';
        break;
      }
      case 'tool_start':
        this.line(`${this.style.cyan(`  ⚙ ${event.call.name}`)}  ${describeCall(event.call)}`);
        break;
      case 'tool_end':
        this.line(this.toolEnd(event.call, event.outcome));
        break;
      case 'turn_end':
        break;
      case 'subagent':
        this.subagent(event, '    │ ');
        break;
      case 'inner_call':
        this.line(this.innerCall(event, '    '));
        break;
    }
  }

  /** A delegate_task child's progress, indented under the call (and deeper for a child's child). */
  private subagent(event: Extract<AgentEvent, { type: 'subagent' }>, indent: string): void {
    const inner = event.event;
    switch (inner.type) {
      case 'subagent':
        this.subagent(inner, `${indent}  │ `);
        break;
      case 'tool_start':
        this.line(`${this.style.dim(indent) + this.style.cyan(`⚙ ${inner.call.name}`)}  ${describeCall(inner.call)}`);
        break;
      case 'tool_end':
        this.line(this.style.dim(indent) + this.toolEnd(inner.call, inner.outcome).trimStart());
        break;
      case 'inner_call':
        this.line(this.innerCall(inner, `${indent}  `));
        break;
      case 'model_end':
        if (inner.response.message.content)
          this.line(
            this.style.dim(`${indent}${oneLine(`${event.goal}: ${inner.response.message.content}`, RESULT_WIDTH)}`),
          );
        break;
      default:
        break;
    }
  }

  private innerCall(event: Extract<AgentEvent, { type: 'inner_call' }>, indent: string): string {
    const mark = event.ok ? this.style.green(`↳ ${event.name}`) : this.style.red(`↳ ${event.name} ✗`);
    return `${indent}${mark}  ${this.style.dim(`${event.ms} ms`)}`;
  }

  /** After the run: a note when it did not simply finish, and the error when there was one. */
  finish(result: AgentResult): void {
    this.endLine();
    if (result.finishReason === 'aborted') this.line(this.style.yellow('[interrupted]'));
    else if (result.finishReason !== 'stop') this.line(this.style.yellow(`[finished: ${result.finishReason}]`));
    if (result.error) this.line(this.style.red(`error: ${result.error.message}`));
  }

  /** A line of its own between streamed output (e.g. a Ctrl-C notice). */
  note(text: string): void {
    this.line(text);
  }

  private reasoning(text: string): void {
    this.streamed.reasoning = true;
    if (!this.showReasoning() || text === '') return;
    if (this.section !== 'reasoning') {
      this.endLine();
      this.write(this.style.dim('(thinking) '));
      this.section = 'reasoning';
    }
    this.write(this.style.dim(text));
  }

  private content(text: string): void {
    this.streamed.content = true;
    if (text === '') return;
    if (this.section !== 'content') {
      this.endLine();
      this.section = 'content';
    }
    this.write(text);
  }

  private toolEnd(call: ToolCallInput, outcome: ToolCallOutcome): string {
    const mark = outcome.ok ? this.style.green(`  ✓ ${call.name}`) : this.style.red(`  ✗ ${call.name}`);
    return `${mark}  ${this.style.dim(`${outcome.ms} ms`)}  ${describeResult(outcome.content)}`;
  }

  private line(text: string): void {
    this.endLine();
    this.write(`${text}\n`);
  }

  private endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }

  private write(text: string): void {
    if (text === '') return;
    this.output.write(text);
    this.atLineStart = text.endsWith('\n');
  }
}

/** The terminal's command as `$ command`; other tools' arguments as compact JSON. */
export function describeCall(call: ToolCallInput): string {
  try {
    const args = JSON.parse(call.arguments || '{}') as Record<string, unknown>;
    if (typeof args.command === 'string') return oneLine(`$ ${args.command}`, ARGUMENTS_WIDTH);
    return oneLine(JSON.stringify(args), ARGUMENTS_WIDTH);
  } catch {
    return oneLine(call.arguments, ARGUMENTS_WIDTH);
  }
}

/** A terminal result as `exit N · output`, an error as its message, anything else clipped. */
export function describeResult(content: string): string {
  try {
    const value = JSON.parse(content) as Record<string, unknown>;
    if (value && typeof value === 'object' && typeof value.error === 'string')
      return oneLine(value.error, RESULT_WIDTH);
    if (value && typeof value === 'object' && typeof value.exit_code === 'number') {
      const output = typeof value.output === 'string' ? value.output : '';
      return oneLine(
        `exit ${value.exit_code}${value.timed_out ? ' (timed out)' : ''}${output.trim() ? ` · ${output}` : ''}`,
        RESULT_WIDTH,
      );
    }
  } catch {
    // Plain text: shown as it is.
  }
  return oneLine(content, RESULT_WIDTH);
}
