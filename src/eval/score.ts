import type { AgentResult } from '../agent/result.js';
import { ConfigError, errorMessage } from '../errors.js';
import type { Usage } from '../model/messages.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { Environment, JudgeInput, RewardContext, RewardOutput } from './environment.js';
import {
  DEFAULT_JUDGE_SCALE,
  gradeWithPanel,
  type JudgeCache,
  type JudgeSettings,
  type PanelVerdict,
} from './judge.js';
import { createRewardContext, NO_JUDGE } from './reward-context.js';
import { finalAnswer, taskPrompt } from './transcript.js';

/** The reward fields of a trajectory record. */
export interface RewardResult {
  reward: number | null;
  scores: Record<string, number>;
  reward_details: unknown;
  reward_error: string | null;
}

export const DEFAULT_REWARD_TIMEOUT_MS = 10 * 60_000;

export interface ScoreInput<Item = unknown> {
  environment: Environment<Item>;
  item: Item;
  result: AgentResult;
  sandbox: Sandbox;
  judges?: JudgeSettings;
  cache: JudgeCache;
  /** Told the usage (tokens, cost) of each judge call the reward makes. */
  onUsage?: (usage: Usage) => void;
}

/**
 * Run the environment's reward hook over the rollout's sandbox, bounded in time. A throw, a
 * timeout or a non-finite score becomes `reward_error` with the message and a null reward —
 * never a silent 0. Judge grades the hook asked for are added to `scores` (judge, judge_pass,
 * judge_agreement, judges) unless the hook set those names itself.
 */
export async function scoreRollout<Item>(input: ScoreInput<Item>): Promise<RewardResult> {
  const { environment } = input;
  if (!environment.reward) return { reward: null, scores: {}, reward_details: null, reward_error: null };
  const configured = environment.rewardTimeoutMs;
  const timeoutMs =
    typeof configured === 'function' ? configured(input.item) : (configured ?? DEFAULT_REWARD_TIMEOUT_MS);
  const controller = new AbortController();
  const calls: PanelVerdict[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`reward timed out after ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const context = createRewardContext(input.sandbox, controller.signal, judgeFor(input, controller.signal, calls));
    const output = await Promise.race([
      Promise.resolve(environment.reward(input.item, input.result, context)),
      timeout,
    ]);
    const normalized = normalizeReward(output);
    return { ...normalized, scores: { ...judgeScores(calls.at(-1)), ...normalized.scores } };
  } catch (error) {
    return { reward: null, scores: judgeScores(calls.at(-1)), reward_details: null, reward_error: errorMessage(error) };
  } finally {
    clearTimeout(timer);
  }
}

function judgeFor<Item>(input: ScoreInput<Item>, signal: AbortSignal, calls: PanelVerdict[]): RewardContext['judge'] {
  const { judges } = input;
  if (!judges) return NO_JUDGE;
  const spec = input.environment.judge;
  return async (request: JudgeInput = {}) => {
    const rubric = request.rubric ?? judges.rubric ?? spec?.rubric;
    if (!rubric) {
      throw new ConfigError(
        `environment '${input.environment.name}': the judge has no rubric; give judge.rubric_file in config.yaml, --judge-rubric FILE, or judge.rubric in the environment`,
        {
          code: 'judge_rubric_missing',
        },
      );
    }
    const verdict = await gradeWithPanel(
      judges,
      {
        rubric,
        prompt: request.prompt ?? taskPrompt(input.result.messages),
        response: request.response ?? finalAnswer(input.result.messages),
        reference: request.reference ?? spec?.reference?.(input.item),
        scale: request.scale ?? judges.scale ?? spec?.scale ?? DEFAULT_JUDGE_SCALE,
        ...(request.sample ? { sample: request.sample } : {}),
      },
      input.cache,
      signal,
      input.onUsage,
    );
    calls.push(verdict);
    return verdict;
  };
}

function judgeScores(verdict: PanelVerdict | undefined): Record<string, number> {
  if (!verdict) return {};
  return {
    judge: verdict.score,
    judge_pass: verdict.pass ? 1 : 0,
    judge_agreement: verdict.agreement,
    judges: verdict.verdicts.length,
  };
}

export function normalizeReward(output: RewardOutput): RewardResult {
  if (typeof output === 'number') {
    if (!Number.isFinite(output))
      return { reward: null, scores: {}, reward_details: null, reward_error: `reward returned ${output}` };
    return { reward: output, scores: {}, reward_details: null, reward_error: null };
  }
  if (!output || typeof output.score !== 'number' || !Number.isFinite(output.score)) {
    return {
      reward: null,
      scores: {},
      reward_details: output ?? null,
      reward_error: 'reward returned no finite "score"',
    };
  }
  return {
    reward: output.score,
    scores: output.scores ?? {},
    reward_details: output.details ?? null,
    reward_error: null,
  };
}

export interface JudgeRewardOutput {
  score: number;
  details: {
    pass: boolean;
    agreement: number;
    judges: { model: string; score: number; pass: boolean; reasoning: string; cached: boolean }[];
  };
}

/** A reward from a panel verdict: the mean judge score, with every judge's grade and reasoning as evidence. */
export function judgeReward(verdict: PanelVerdict): JudgeRewardOutput {
  return {
    score: verdict.score,
    details: {
      pass: verdict.pass,
      agreement: verdict.agreement,
      judges: verdict.verdicts.map(({ model, score, pass, reasoning, cached }) => ({
        model,
        score,
        pass,
        reasoning,
        cached,
      })),
    },
  };
}
