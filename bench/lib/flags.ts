/**
 * Command-line flags of the long-running benches (bench/soak.ts, bench/storm.ts): `--name
 * value`, `--name=value`, a boolean flag alone, each also an environment variable
 * `<PREFIX>_<NAME>` (the flag wins). Each bench keeps its own table of flags, defaults and
 * ranges; this reads them the same way for both.
 */

export interface FlagSpec {
  flag: string;
  /** A flag given alone means 1. */
  bool: boolean;
}

/** `--some-flag` -> `<PREFIX>_SOME_FLAG`. */
export const envNameOf =
  (prefix: string) =>
  (flag: string): string =>
    `${prefix}_${flag.toUpperCase().replace(/-/g, '_')}`;

/** The raw text of each flag as given (argv first, then the environment), or undefined; unknown arguments throw. */
export function readFlags(argv: string[], specs: FlagSpec[], env: Record<string, string | undefined>, envName: (flag: string) => string): (flag: string) => string | undefined {
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(a);
    const spec = m && specs.find((f) => f.flag === m[1]);
    if (!m || !spec) throw new Error(`unknown argument ${a}`);
    if (m[2] !== undefined) given.set(spec.flag, m[2]);
    else if (spec.bool) given.set(spec.flag, '1');
    else {
      const v = argv[++i];
      if (v === undefined) throw new Error(`--${spec.flag} needs a value`);
      given.set(spec.flag, v);
    }
  }
  return (flag) => given.get(flag) ?? env[envName(flag)];
}

/** A boolean flag's text: 1/0 or true/false; absent is false. */
export function flagBool(flag: string, raw: string | undefined): boolean {
  if (raw === undefined) return false;
  if (!['1', '0', 'true', 'false'].includes(raw)) throw new Error(`--${flag} is 1/0 or true/false, not ${raw}`);
  return raw === '1' || raw === 'true';
}
