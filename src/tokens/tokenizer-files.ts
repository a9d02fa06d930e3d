import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, errorMessage } from '../errors.js';
import { trajHome } from '../util/paths.js';

/** What a model repository ships for its tokenizer: tokenizer.json and tokenizer_config.json (+ its template). */
export interface TokenizerFiles {
  /** tokenizer.json, parsed. */
  tokenizer: Record<string, unknown>;
  /** tokenizer_config.json, parsed. */
  config: Record<string, unknown>;
  /** The chat template: tokenizer_config.json's `chat_template`, else chat_template.jinja beside it. */
  template: string;
  /** The folder the files were read from. */
  folder: string;
}

export interface TokenizerSourceOptions {
  /** Another Hub endpoint (a mirror, a stand-in); default $HF_ENDPOINT, else huggingface.co. */
  hubUrl?: string;
  /** Where Hub downloads are kept; default TRAJ_HOME/cache/hub (the Hugging Face cache layout). */
  cacheDir?: string;
}

const DEFAULT_HUB_URL = 'https://huggingface.co';
const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+(@[\w./-]+)?$/;

/**
 * `tokenizer:` is a local folder (a path that exists, or one written with ./ ../ / ~) or a Hub
 * model id `ORG/NAME[@REVISION]`, whose two files are downloaded once into the cache.
 */
export async function tokenizerFiles(spec: string, options: TokenizerSourceOptions = {}): Promise<TokenizerFiles> {
  const local = spec.startsWith('~/') ? join(process.env.HOME ?? '', spec.slice(2)) : spec;
  if (existsSync(local) || /^(\.{0,2}\/)/.test(local)) return readFolder(resolve(local), spec);
  if (!HUB_ID.test(spec))
    throw new ConfigError(
      `tokenizer: '${spec}' is neither a folder nor a Hugging Face model id (ORG/NAME or ORG/NAME@REVISION)`,
      { code: 'tokenizer_not_found', details: { tokenizer: spec } },
    );
  return readFolder(await downloadFromHub(spec, options), spec);
}

function readFolder(folder: string, spec: string): TokenizerFiles {
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new ConfigError(
      `tokenizer: ${folder} is not a folder (it should hold tokenizer.json and tokenizer_config.json)`,
      {
        code: 'tokenizer_not_found',
        details: { tokenizer: spec },
      },
    );
  const tokenizer = readJson(join(folder, 'tokenizer.json'), spec);
  const config = readJson(join(folder, 'tokenizer_config.json'), spec);
  const template = templateOf(config, folder, spec);
  return { tokenizer, config, template, folder };
}

function readJson(path: string, spec: string): Record<string, unknown> {
  if (!existsSync(path))
    throw new ConfigError(`tokenizer '${spec}': ${path} is missing`, {
      code: 'tokenizer_not_found',
      details: { tokenizer: spec, path },
    });
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`tokenizer '${spec}': ${path} is not valid JSON (${errorMessage(error)})`, {
      code: 'tokenizer_invalid',
      details: { tokenizer: spec, path },
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(`tokenizer '${spec}': ${path} should hold a JSON object`, {
      code: 'tokenizer_invalid',
      details: { tokenizer: spec, path },
    });
  return value as Record<string, unknown>;
}

/** A string template, the `default` of a list of named templates, or chat_template.jinja (newer repositories). */
function templateOf(config: Record<string, unknown>, folder: string, spec: string): string {
  const template = config.chat_template;
  if (typeof template === 'string') return template;
  if (Array.isArray(template)) {
    const named = template.find((entry) => (entry as { name?: unknown }).name === 'default') as
      | { template?: unknown }
      | undefined;
    if (typeof named?.template === 'string') return named.template;
  }
  const jinja = join(folder, 'chat_template.jinja');
  if (existsSync(jinja)) return readFileSync(jinja, 'utf8');
  throw new ConfigError(
    `tokenizer '${spec}': no chat template (tokenizer_config.json has no chat_template and there is no chat_template.jinja in ${folder})`,
    { code: 'tokenizer_invalid', details: { tokenizer: spec } },
  );
}

const FILES = ['tokenizer.json', 'tokenizer_config.json'];

/** Both files into the Hugging Face cache layout; the folder of the snapshot they landed in. */
async function downloadFromHub(spec: string, options: TokenizerSourceOptions): Promise<string> {
  const [name, revision = 'main'] = spec.split('@') as [string, string?];
  const hub = await import('@huggingface/hub');
  const hubUrl = (options.hubUrl ?? process.env.HF_ENDPOINT ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const cacheDir = options.cacheDir ?? join(trajHome(), 'cache', 'hub');
  let folder = '';
  for (const path of FILES) {
    try {
      const local = await hub.downloadFileToCacheDir({
        repo: { type: 'model', name },
        path,
        revision,
        hubUrl,
        cacheDir,
        ...(process.env.HF_TOKEN ? { accessToken: process.env.HF_TOKEN } : {}),
      });
      folder = local.slice(0, -path.length - 1);
    } catch (error) {
      throw hubFailure(spec, path, hubUrl, error);
    }
  }
  return folder;
}

function hubFailure(spec: string, path: string, hubUrl: string, error: unknown): ConfigError {
  const status = (error as { statusCode?: unknown }).statusCode;
  if (status === 404 || /cannot get path info/.test(errorMessage(error)))
    return new ConfigError(`tokenizer '${spec}': ${path} not found on ${hubUrl}`, {
      code: 'tokenizer_not_found',
      details: { tokenizer: spec, path },
    });
  return new ConfigError(
    `tokenizer '${spec}': cannot download ${path} from ${hubUrl} (${errorMessage(error)}); set HF_ENDPOINT for a mirror, HF_TOKEN for a gated model, or give a local folder`,
    { code: 'tokenizer_unreachable', retryable: true, cause: error, details: { tokenizer: spec, path } },
  );
}
