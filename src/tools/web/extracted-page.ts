/** A page as cached and shown: the converted text with where it came from. */
export interface ExtractedPage {
  url: string;
  final_url: string;
  title: string;
  content_type: string;
  content: string;
  /** Bytes the page had beyond web.extract.max_bytes (only that much was read). */
  cut_at_bytes?: number;
  /** The page was this long and `content` is the summariser's summary of it. */
  summarized_from_chars?: number;
}
