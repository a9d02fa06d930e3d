import { z } from 'zod';
import type { ToolSpec } from '../model/messages.js';
import { isZodTool, type Tool } from './tool.js';

const specs = new WeakMap<Tool, ToolSpec>();

/** The tool as offered to the model; computed once per tool (JSON Schema generation is costly). */
export function toolSpec(tool: Tool): ToolSpec {
  let spec = specs.get(tool);
  if (!spec) {
    spec = buildToolSpec(tool);
    specs.set(tool, spec);
  }
  return spec;
}

function buildToolSpec(tool: Tool): ToolSpec {
  const parameters = isZodTool(tool)
    ? (z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>)
    : tool.inputSchema;
  const { $schema: _ignored, ...schema } = parameters as Record<string, unknown> & { $schema?: unknown };
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: withoutSafeIntegerBounds(schema) },
  };
}

/**
 * zod writes its safe-integer range (±9007199254740991) into every `z.number().int()`: noise sent
 * to the model on every request and saved in every record. Bounds a tool sets itself are kept.
 */
function withoutSafeIntegerBounds<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds) as T;
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([key, item]) =>
      !(
        (key === 'maximum' && item === Number.MAX_SAFE_INTEGER) ||
        (key === 'minimum' && item === Number.MIN_SAFE_INTEGER)
      ),
  );
  return Object.fromEntries(entries.map(([key, item]) => [key, withoutSafeIntegerBounds(item)])) as T;
}
