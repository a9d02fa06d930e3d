import { z } from 'zod';

export const ExportFormatSchema = z.enum(['parquet', 'jsonl', 'arrow', 'atropos', 'hermes', 'tokens']);
export type ExportFormat = z.infer<typeof ExportFormatSchema>;

export const ExportViewSchema = z
  .enum(['both', 'sharegpt', 'messages'])
  .describe('which conversation columns rows carry');
export type ExportView = z.infer<typeof ExportViewSchema>;

export const SplitBySchema = z.enum(['status', 'toolsets', 'category']);
export type SplitBy = z.infer<typeof SplitBySchema>;

/** What `traj export` is asked to write (the push target is separate: see hub-push.ts). */
export const ExportOptionsSchema = z.object({
  format: ExportFormatSchema.default('parquet'),
  view: ExportViewSchema.default('both'),
  splitBy: SplitBySchema.optional(),
  filter: z.string().min(1).optional().describe('a --filter expression over record fields'),
  shardSizeMb: z
    .number()
    .positive()
    .default(500)
    .describe('a shard closes once its rows reach this many MB of record JSON'),
  out: z.string().describe('the dataset folder: data/ shards and README.md go here'),
  /** The policy's tokenizer (a folder or a Hub model id): needed by tokens, fills atropos tokens/masks. */
  tokenizer: z.string().min(1).optional(),
  /** The training length in tokens: longer rollouts are dropped or truncated (`overLength`). */
  maxTokens: z.number().int().positive().optional(),
  overLength: z.enum(['drop', 'truncate']).default('drop'),
  /** Export the records as `traj compress` left them (compressed where it compressed them). */
  compressed: z.boolean().default(false),
  /** Drop calls to tools not offered, arguments invalid against the tool's schema, and empty final answers. */
  quality: z.boolean().default(false),
  /** Keep the first record of each prompt and of each normalised final answer. */
  dedupe: z.boolean().default(false),
  /** A benchmark file: drop records whose prompt shares a 13-gram with one of its items. */
  decontaminate: z.string().min(1).optional(),
  /** The Hub repository the card's loading example names, when the export is pushed. */
  repository: z.string().optional(),
});
export type ExportOptions = z.infer<typeof ExportOptionsSchema>;
export type ExportOptionsInput = z.input<typeof ExportOptionsSchema>;
