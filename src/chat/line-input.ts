import { createInterface, type Completer, type Interface } from 'node:readline';

export interface LineInputOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** A terminal: prompts, line editing, history and tab completion; Ctrl-C arrives as `onInterrupt`. */
  interactive: boolean;
  completer?: Completer;
  onInterrupt?: () => void;
}

interface Waiter {
  resolve: (line: string | undefined) => void;
  prompt: string;
}

/**
 * Lines from a terminal or a pipe, one reader at a time: the chat prompt and an approval question
 * take turns on the same stream, so in piped mode the line after a message answers its approval.
 * Lines typed while nobody reads wait in a queue.
 */
export class LineInput {
  private readonly readline: Interface;
  private readonly queue: string[] = [];
  private waiter: Waiter | undefined;
  private ended = false;

  constructor(private readonly options: LineInputOptions) {
    this.readline = createInterface({
      input: options.input,
      output: options.interactive ? options.output : undefined,
      terminal: options.interactive,
      completer: options.interactive ? options.completer : undefined,
      historySize: 500,
    });
    this.readline.on('line', (line) => this.deliver(line));
    this.readline.on('close', () => {
      this.ended = true;
      this.take(undefined);
    });
    if (options.interactive && options.onInterrupt) this.readline.on('SIGINT', options.onInterrupt);
  }

  get interactive(): boolean {
    return this.options.interactive;
  }

  /** What is typed at the prompt so far (terminal only). */
  get partialLine(): string {
    return this.options.interactive ? this.readline.line : '';
  }

  clearPartialLine(): void {
    if (this.options.interactive) this.readline.write(null, { ctrl: true, name: 'u' });
  }

  /** Show the prompt again on a fresh line (after Ctrl-C at the prompt). */
  reprompt(): void {
    if (this.options.interactive && this.waiter) this.readline.prompt();
  }

  /** The next line, or undefined at the end of input or once `signal` aborts. */
  read(prompt: string, signal?: AbortSignal): Promise<string | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    const queued = this.queue.shift();
    if (queued !== undefined) {
      this.echo(prompt, queued);
      return Promise.resolve(queued);
    }
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = () => {
        if (this.waiter?.resolve !== finish) return;
        this.waiter = undefined;
        if (this.options.interactive) this.options.output.write('\n');
        resolve(undefined);
      };
      const finish = (line: string | undefined) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(line);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiter = { resolve: finish, prompt };
      if (this.options.interactive) {
        this.readline.setPrompt(prompt);
        this.readline.prompt();
      }
    });
  }

  close(): void {
    this.readline.close();
  }

  private deliver(line: string): void {
    const waiter = this.waiter;
    if (!waiter) {
      this.queue.push(line);
      return;
    }
    this.echo(waiter.prompt, line);
    this.take(line);
  }

  private take(line: string | undefined): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve(line);
  }

  /** Piped input is not shown by a terminal: write the prompt and the line, so output reads as a transcript. */
  private echo(prompt: string, line: string): void {
    if (!this.options.interactive) this.options.output.write(`${prompt}${line}\n`);
  }
}
