import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { readConfigFile, validate } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { cycleScript } from './conversation-script.js';
import { ScriptedResponseSchema, type Script } from './script.js';

/**
 * A script file: a JSON/YAML list of responses answered in order (past its end every request
 * gets a 400 saying the script is exhausted), or `{cycle: true, responses: [...]}` answered
 * round and round; or a .js/.mjs module whose default export is a script function (or a list).
 */
export const ScriptFileSchema = z.union([
  z.array(ScriptedResponseSchema),
  z.object({ cycle: z.boolean().default(false), responses: z.array(ScriptedResponseSchema).min(1) }).strict(),
]);

const MODULE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);
const DATA_EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

export async function loadScriptFile(file: string): Promise<Script> {
  const extension = extname(file).toLowerCase();
  if (MODULE_EXTENSIONS.has(extension)) return loadScriptModule(file);
  if (!DATA_EXTENSIONS.has(extension)) {
    throw new ConfigError(
      `${file}: a script file must be .json, .yaml, .yml, .js or .mjs (got '${extension || 'no extension'}')`,
      { code: 'config_invalid' },
    );
  }
  const value = readConfigFile(file);
  // Validated branch by branch: zod's union errors would not name the field that is wrong.
  if (Array.isArray(value)) return validate(z.array(ScriptedResponseSchema), value, file);
  const script = validate(ScriptFileSchema.options[1], value, file);
  return script.cycle ? cycleScript(script.responses) : script.responses;
}

async function loadScriptModule(file: string): Promise<Script> {
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(resolve(file)).href)) as { default?: unknown };
  } catch (error) {
    throw new ConfigError(
      `${file}: cannot load the script module (${error instanceof Error ? error.message : String(error)})`,
      { code: 'config_missing' },
    );
  }
  const script = loaded.default;
  if (typeof script === 'function') return script as Script;
  if (Array.isArray(script)) return validate(z.array(ScriptedResponseSchema), script, `${file} (default export)`);
  throw new ConfigError(
    `${file}: the default export must be a script function (request, context) => response, or a list of responses`,
    { code: 'config_invalid' },
  );
}
