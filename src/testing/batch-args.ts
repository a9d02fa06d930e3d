/**
 * `traj batch` of `dataset` as run `run` against a scripted endpoint at `baseUrl` (model `model`,
 * the key read from the environment variable `keyVariable`), then the caller's own flags. Tests,
 * benchmarks and demos drive the CLI with it.
 */
export function scriptedBatchArgs(
  dataset: string,
  run: string,
  baseUrl: string,
  keyVariable: string,
  flags: string[],
  model = 'traj-scripted',
): string[] {
  return [
    'batch',
    '--dataset',
    dataset,
    '--run',
    run,
    '--base-url',
    baseUrl,
    '--model',
    model,
    '--api-key-env',
    keyVariable,
    ...flags,
  ];
}
