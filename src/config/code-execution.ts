import { z } from 'zod';

/** Tools a script may call unless configured otherwise (each only when the run offers it). */
export const DEFAULT_CODE_TOOLS = [
  'terminal',
  'read_file',
  'write_file',
  'patch',
  'search_files',
  'web_search',
  'web_extract',
];

/** The `code_execution:` section of a config: what an execute_code script may do. */
export const CodeExecutionConfigSchema = z.strictObject({
  tools: z
    .array(z.string().min(1))
    .default(DEFAULT_CODE_TOOLS)
    .describe('tools the script may call, among those the run offers; execute_code and delegate_task never'),
  max_tool_calls: z
    .number()
    .int()
    .positive()
    .default(50)
    .describe('tool calls one script may make; the next one raises ToolCallLimit'),
  timeout: z
    .number()
    .positive()
    .default(300)
    .describe('seconds before the script and everything it started are killed'),
  max_output_chars: z
    .number()
    .int()
    .positive()
    .default(50_000)
    .describe("the script's stdout kept for the model, as head and tail"),
});
export type CodeExecutionConfig = z.infer<typeof CodeExecutionConfigSchema>;
export const DEFAULT_CODE_EXECUTION: CodeExecutionConfig = CodeExecutionConfigSchema.parse({});
