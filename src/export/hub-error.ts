import { TrajError } from '../errors.js';

/** The Hugging Face Hub refused or failed a request: names the repository, the step and the Hub's answer. */
export class HubError extends TrajError {}
