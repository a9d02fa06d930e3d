import { assistantTurns } from './conversation-script.js';
import { scriptError, type ChatRequest, type Script, type ScriptFunction } from './script.js';

/**
 * One server playing several parts (the agent, a simulated user, a judge): each request is answered
 * by the script of the model it names in its body, as a real deployment routes by model. A list is
 * answered in order per model; a function sees its model's own request count as `context.index`.
 */
export function scriptByModel(scripts: Record<string, Script>, fallback?: Script): ScriptFunction {
  const counts = new Map<string, number>();
  return (request: ChatRequest) => {
    const model = request.model ?? '';
    const script = scripts[model] ?? fallback;
    if (script === undefined)
      return scriptError(`no script plays model '${model}' (scripted models: ${Object.keys(scripts).join(', ')})`);
    const key = model in scripts ? model : '\0fallback';
    const index = counts.get(key) ?? 0;
    counts.set(key, index + 1);
    if (typeof script === 'function') return script(request, { index, turn: assistantTurns(request) });
    return (
      script[index] ??
      scriptError(`the script of model '${model}' has ${script.length} responses and this is its request ${index + 1}`)
    );
  };
}
