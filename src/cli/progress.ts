import cliProgress from 'cli-progress';
import type { Usage } from '../model/messages.js';
import type { PipelineEvent } from '../run/pipeline.js';
import { costText, usd } from '../util/cost-text.js';

interface Counters {
  done: number;
  discarded: number;
  failed: number;
  inFlight: number;
  skipped: number;
  tokens: number;
}

/** How long the last error shown in a progress line may be. */
const ERROR_WIDTH = 100;

/**
 * Progress of a run on stderr: a cli-progress bar on a TTY, otherwise one line every 10 s
 * (logs stay readable in CI and under nohup). The last error (a model call being retried, a
 * failed rollout) is shown as it happens, so a dead endpoint is never a silent wait.
 */
export class RunProgress {
  private readonly counters: Counters = { done: 0, discarded: 0, failed: 0, inFlight: 0, skipped: 0, tokens: 0 };
  private readonly started = performance.now();
  private bar?: cliProgress.SingleBar;
  private timer?: NodeJS.Timeout;
  private lastError = '';
  private lastErrorShownAt = Number.NEGATIVE_INFINITY;
  private requestsInFlight?: () => number;
  /** The run's spend (earlier invocations included), its limit, and models whose calls have no known cost. */
  private readonly spend = { usd: 0, limit: undefined as number | undefined, unpriced: new Set<string>() };
  private concurrency?: () => { level: number; max: number };

  constructor(
    private readonly total: number | undefined,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    intervalMs = 10_000,
  ) {
    if (stream.isTTY) {
      this.bar = new cliProgress.SingleBar(
        {
          stream,
          format:
            ' {bar} {value}/{total} | {rate}/min | ETA {eta_formatted} | in flight {inFlight} (requests {requests}) | conc {conc} | errors {failed} | discarded {discarded} | tokens {tokens}{spend}{lastError}',
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

  /** Show model requests in flight beside rollouts in flight (read when a line is drawn). */
  watchRequests(read: (() => number) | undefined): void {
    this.requestsInFlight = read;
  }

  /** Show the run's running spend, starting from what earlier invocations spent, against --max-cost. */
  watchSpend(spentBefore: number, limitUsd: number | undefined): void {
    this.spend.usd = spentBefore;
    this.spend.limit = limitUsd;
  }

  private spendText(): string {
    const { usd: spent, limit, unpriced } = this.spend;
    const of = limit === undefined ? '' : ` of ${usd(limit)}`;
    return ` | spent ${costText({ usd: spent, unpricedModels: [...unpriced] })}${of}`;
  }

  /** Show the endpoint's concurrency level beside its cap (`conc 37/64`, read when a line is drawn). */
  watchConcurrency(read: (() => { level: number; max: number }) | undefined): void {
    this.concurrency = read;
  }

  /** Finished rollouts of this invocation plus those already finished before (a resume). */
  private finished(): number {
    return this.counters.done + this.counters.discarded + this.counters.failed + this.counters.skipped;
  }

  private payload() {
    const minutes = (performance.now() - this.started) / 60_000;
    const fresh = this.counters.done + this.counters.discarded + this.counters.failed;
    const requests = this.requestsInFlight ? String(this.requestsInFlight()) : '?';
    const gate = this.concurrency?.();
    return {
      ...this.counters,
      requests,
      conc: gate ? `${gate.level}/${gate.max}` : '?',
      rate: minutes > 0 ? (fresh / minutes).toFixed(1) : '0',
      spend: this.spendText(),
      lastError: this.lastError ? ` | last error: ${this.lastError}` : '',
    };
  }

  line(): string {
    const payload = this.payload();
    const of = this.total !== undefined ? `/${this.total}` : '';
    return `[traj] ${this.finished()}${of} finished (done ${payload.done}, discarded ${payload.discarded}, failed ${payload.failed}, skipped ${payload.skipped}) | in flight ${payload.inFlight} rollouts, ${payload.requests} model requests, conc ${payload.conc} | ${payload.rate}/min | tokens ${payload.tokens}${payload.spend}${payload.lastError}`;
  }

  /** A new error message: on the bar at once; without a TTY as its own line (at most one every 2 s). */
  private showError(message: string, prefix: string): void {
    const text = message.replace(/\s+/g, ' ').trim();
    this.lastError = text.length > ERROR_WIDTH ? `${text.slice(0, ERROR_WIDTH - 1)}…` : text;
    if (this.bar || this.stopped) return;
    const now = performance.now();
    if (now - this.lastErrorShownAt < 2_000) return;
    this.lastErrorShownAt = now;
    this.stream.write(`[traj] ${prefix}${text}\n`);
  }

  onEvent(event: PipelineEvent): void {
    const counters = this.counters;
    if (event.type === 'retrying')
      this.showError(
        event.message,
        event.attempt > 0
          ? `retrying a model call (attempt ${event.attempt} failed, next in ${(event.delayMs / 1000).toFixed(1)} s): `
          : '',
      );
    else if (event.type === 'halted') this.showError(event.reason, 'stopping dispatch: ');
    else if (event.type === 'dispatched') counters.inFlight++;
    else if (event.type === 'skipped') counters.skipped++;
    else if (event.type === 'interrupted') counters.inFlight--;
    else if (event.type === 'finished') {
      counters.inFlight--;
      counters[event.status]++;
      if (event.error && event.status === 'failed') this.showError(event.error.message, 'rollout failed: ');
      if (event.record) {
        counters.tokens += event.record.usage.prompt_tokens + event.record.usage.completion_tokens;
        this.addSpend(event.record.usage);
      }
    } else return;
    this.bar?.update(this.finished(), this.payload());
  }

  private addSpend(usage: Usage): void {
    this.spend.usd = Math.round((this.spend.usd + (usage.cost ?? 0)) * 1e12) / 1e12;
    for (const model of usage.unpriced_models ?? []) this.spend.unpriced.add(model);
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
