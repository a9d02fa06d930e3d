import { basename, dirname, join } from 'node:path';
import { resolveAuxiliary } from '../config/auxiliary.js';
import { ConfigError } from '../errors.js';
import { compressRun, type CompressRunSummary } from '../run/compress-run.js';
import { ENDPOINT_OPTIONS, integerOption, stringOption, type CommandDefinition } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { exitCodeHelp } from './exit-codes.js';
import { RUN_OPTIONS, runConfigFrom } from './run-options.js';
import { locateStore } from './run-store-path.js';
import { installStopSignals } from './signals.js';

export const command: CommandDefinition = {
  name: 'compress',
  summary:
    "fit a finished run's trajectories to a token budget for SFT, as Hermes' trajectory_compressor does (resumable)",
  usage: 'traj compress RUN --max-tokens N --tokenizer ID|DIR [--config FILE] [--concurrency N] [options]',
  allowPositionals: true,
  options: {
    'max-tokens': {
      type: 'string',
      value: 'N',
      description: 'the training length: records over N tokens get their middle summarised (Hermes: 15250)',
    },
    tokenizer: {
      type: 'string',
      value: 'ID|DIR',
      description:
        "the policy's tokenizer (a Hugging Face model id or a folder with tokenizer.json) that counts tokens",
    },
    'summary-tokens': {
      type: 'string',
      value: 'N',
      description: 'what a summary is expected to cost in tokens; its max_tokens is twice this (default 750)',
    },
    'protect-last': {
      type: 'string',
      value: 'N',
      description: 'turns at the end kept whole (default 4)',
    },
    force: { type: 'boolean', description: 'compress every record again when the settings differ from the last time' },
    config: RUN_OPTIONS.config!,
    concurrency: {
      type: 'string',
      value: 'N',
      description: 'records shaped at once, and the cap of summary requests in flight (default 32)',
    },
    checkpoints: RUN_OPTIONS.checkpoints!,
    out: {
      type: 'string',
      value: 'DIR',
      description: "the run's output folder, whose statistics.json gets the totals",
    },
    'scripted-if-unset': RUN_OPTIONS['scripted-if-unset']!,
    ...ENDPOINT_OPTIONS,
  },
  details: `RUN is a run name (checkpoints/RUN.sqlite) or the path of a .sqlite run store.
Each done record over --max-tokens keeps its system turn, first human turn, first assistant turn with its
tool result and the last --protect-last turns byte for byte; the turns after the head are replaced, from the
front, by one human turn "[CONTEXT SUMMARY]: ..." written by auxiliary.summarizer (from --config or
TRAJ_HOME/config.yaml; else the main endpoint), just enough of them to fit. A record that cannot fit is
marked over the limit, never cut. Compressed records are stored beside the run; export them with
traj export RUN --compressed. Rerun the same command after a stop or a kill: only records not yet stored
are shaped. Totals: the printed summary and statistics.json ("compress"). See docs/compress.md.
${exitCodeHelp()}`,
  async run({ values, positionals }) {
    if (positionals.length !== 1)
      throw new ConfigError('traj compress: give exactly one RUN (a run name or a .sqlite path)', {
        code: 'cli_usage',
      });
    const maxTokens = integerOption(values, 'max-tokens', { min: 1 });
    const tokenizer = stringOption(values, 'tokenizer');
    if (maxTokens === undefined || !tokenizer)
      throw new ConfigError('traj compress needs --max-tokens N and --tokenizer ID|DIR', { code: 'cli_usage' });
    const checkpoints = stringOption(values, 'checkpoints') ?? 'checkpoints';
    const storePath = locateStore(positionals[0]!, checkpoints, 'compress');
    const config = runConfigFrom(values, { run: basename(storePath, '.sqlite') });
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const resolved = await resolveEndpoint(values, config.endpoint, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log,
    });
    const signals = installStopSignals(
      () => log('stopping: no new record starts; the ones in flight land (rerun to finish)'),
      () => {},
    );
    try {
      const auxiliary = resolveAuxiliary(config.tools.auxiliary, resolved.endpoint).summarizer;
      const summary = await compressRun({
        storePath,
        maxTokens,
        tokenizer,
        summarizer: auxiliary ?? resolved.endpoint,
        summarizerIdentity:
          auxiliary && auxiliary.base_url !== resolved.endpoint.base_url ? auxiliary.base_url : resolved.identity,
        concurrency: config.concurrency ?? 32,
        summaryTargetTokens: integerOption(values, 'summary-tokens', { min: 1 }),
        protectLastTurns: integerOption(values, 'protect-last', { min: 0 }),
        force: values.force === true,
        stop: signals.stop,
        outputDirectory: stringOption(values, 'out') ?? join('datasets', basename(storePath, '.sqlite')),
      });
      process.stdout.write(formatSummary(summary, storePath));
      return summary.stopped ? 130 : 0;
    } finally {
      signals.dispose();
      await resolved.scripted?.close();
    }
  },
};

function formatSummary(summary: CompressRunSummary, storePath: string): string {
  const totals = summary.totals;
  const lines = [
    `compressed run '${summary.run}' (${storePath.replace(`${dirname(storePath)}/`, '')}) to ${summary.spec.max_tokens} tokens with ${summary.spec.tokenizer}: ${summary.shaped} records shaped now, ${summary.failed} failed${summary.stopped ? ', stopped early (rerun to finish)' : ''}`,
  ];
  if (totals) {
    lines.push(
      `  records: ${totals.records} (compressed ${totals.compressed}, under the budget ${totals.under_budget}, over the limit ${totals.over_limit}, failed ${totals.failed})`,
      `  tokens: ${totals.tokens_before} before, ${totals.tokens_after} after; turns summarised: ${totals.turns_summarised}; summary calls: ${totals.summary_calls}`,
    );
  }
  if (summary.statistics) lines.push(`statistics: ${summary.statistics}`);
  return `${lines.join('\n')}\n`;
}
