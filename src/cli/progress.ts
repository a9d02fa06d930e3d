import cliProgress from 'cli-progress';
import type { PipelineEvent } from '../run/pipeline.js';

interface Counters {
  done: number;
  discarded: number;
  failed: number;
  inFlight: number;
  skipped: number;
  tokens: number;
}

/**
 * Progress of a run on stderr: a cli-progress bar on a TTY, otherwise one line every 10 s
 * (logs stay readable in CI and under nohup).
 */
export class RunProgress {
  private readonly counters: Counters = { done: 0, discarded: 0, failed: 0, inFlight: 0, skipped: 0, tokens: 0 };
  private readonly started = performance.now();
  private bar?: cliProgress.SingleBar;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly total: number | undefined,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    intervalMs = 10_000,
  ) {
    if (stream.isTTY) {
      this.bar = new cliProgress.SingleBar(
        {
          stream,
          format: ' {bar} {value}/{total} | {rate}/min | ETA {eta_formatted} | in flight {inFlight} | errors {failed} | discarded {discarded} | tokens {tokens}',
          hideCursor: true,
          etaBuffer: 50,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total ?? 0, 0, this.payload());
    } else {
      this.timer = setInterval(() => this.stream.write(`${this.line()}\n`), intervalMs);
      this.timer.unref();
    }
  }

  /** Finished rollouts of this invocation plus those already finished before (a resume). */
  private finished(): number {
    return this.counters.done + this.counters.discarded + this.counters.failed + this.counters.skipped;
  }

  private payload() {
    const minutes = (performance.now() - this.started) / 60_000;
    const fresh = this.counters.done + this.counters.discarded + this.counters.failed;
    return { ...this.counters, rate: minutes > 0 ? (fresh / minutes).toFixed(1) : '0' };
  }

  line(): string {
    const payload = this.payload();
    const of = this.total !== undefined ? `/${this.total}` : '';
    return `[traj] ${this.finished()}${of} finished (done ${payload.done}, discarded ${payload.discarded}, failed ${payload.failed}, skipped ${payload.skipped}) | in flight ${payload.inFlight} | ${payload.rate}/min | tokens ${payload.tokens}`;
  }

  onEvent(event: PipelineEvent): void {
    const counters = this.counters;
    if (event.type === 'dispatched') counters.inFlight++;
    else if (event.type === 'skipped') counters.skipped++;
    else if (event.type === 'interrupted') counters.inFlight--;
    else if (event.type === 'finished') {
      counters.inFlight--;
      counters[event.status]++;
      if (event.record) counters.tokens += event.record.usage.prompt_tokens + event.record.usage.completion_tokens;
    } else return;
    this.bar?.update(this.finished(), this.payload());
  }

  private stopped = false;

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.bar) {
      this.bar.update(this.finished(), this.payload());
      this.bar.stop();
    } else this.stream.write(`${this.line()}\n`);
  }
}
