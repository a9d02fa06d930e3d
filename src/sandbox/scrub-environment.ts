/** Names that look like credentials: none of them may reach a tool command. */
const SECRET_NAME = /(_API_KEY|_TOKEN|_SECRET|PASSWORD)$|^HF_TOKEN$|^API_KEY$/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** A copy of `env` without credential-like variables, even ones a caller passed on purpose. */
export function scrubEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretName(name)) out[name] = value;
  }
  return out;
}

/** The only host variables sandbox commands (and the processes around them) inherit. */
const INHERITED_VARIABLES = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TMPDIR', 'USER', 'SHELL'] as const;

/** An environment built from scratch: a few harmless host variables, never a credential. */
export function baseEnvironment(): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) inherited[name] = value;
  }
  inherited.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return scrubEnvironment(inherited);
}
