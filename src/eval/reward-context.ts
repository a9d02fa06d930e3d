import { ConfigError } from '../errors.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { shellQuote } from '../util/shell.js';
import type { RewardContext } from './environment.js';

/** The judge of a run that configured none: says how to configure one. */
export const NO_JUDGE: RewardContext['judge'] = () =>
  Promise.reject(
    new ConfigError(
      "this reward asks for an LLM judge but the run has none: pass --judge-model M --judge-base-url URL [--judge-api-key-env VAR], or set judge.models in the environment's config.yaml",
      {
        code: 'judge_missing',
      },
    ),
  );

/** A RewardContext over the rollout's own sandbox (the same one the agent used). */
export function createRewardContext(
  sandbox: Sandbox,
  signal: AbortSignal,
  judge: RewardContext['judge'] = NO_JUDGE,
): RewardContext {
  return {
    sandbox,
    signal,
    judge,
    judgeAvailable: judge !== NO_JUDGE,
    exec: (command, options) => sandbox.exec(command, { signal, ...options }),
    readFile: (path) => sandbox.readFile(path),
    writeFile: (path, data) => sandbox.writeFile(path, data),
    upload: (localPath, remotePath) => sandbox.upload(localPath, remotePath),
    download: (remotePath, localPath) => sandbox.download(remotePath, localPath),
    async listFiles(path = '.') {
      const result = await sandbox.exec(
        `cd ${shellQuote(path)} && find . -type f -not -path './.traj/*' | sed 's#^\\./##' | sort`,
        { signal },
      );
      if (result.exitCode !== 0)
        throw new Error(`listFiles(${path}) failed: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
      return result.stdout.split('\n').filter(Boolean);
    },
  };
}
