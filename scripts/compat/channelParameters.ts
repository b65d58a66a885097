/**
 * The values a channel's address parameter takes (AsyncAPI 3 `channels.<c>.parameters.<p>`:
 * `enum`, `default`, `location`, no schema). A client fills the parameter in the address it
 * subscribes to (`/orders/{orderId}/stream`), so it is a request value: an `enum` set where
 * the release had none, or a value dropped from it, refuses addresses released clients use.
 * `@asyncapi/diff` leaves these edits unclassified (a note for review), so the gate judges
 * them here; a value added, or an `enum` dropped, passes.
 */
import { asRecord, type Finding } from './types';

/** A parameter, its local `$ref` followed (`#/components/parameters/OrderId`). */
function parameterOf(doc: Record<string, unknown>, node: unknown): Record<string, unknown> {
  const ref = asRecord(node).$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return asRecord(node);
  return asRecord(
    ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, key) => asRecord(at)[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc),
  );
}

const enumOf = (p: Record<string, unknown>): string[] | undefined => (Array.isArray(p.enum) ? p.enum.map(String) : undefined);

export function checkChannelParameters(released: Record<string, unknown>, current: Record<string, unknown>): Finding[] {
  const findings: Finding[] = [];
  for (const [channel, before] of Object.entries(asRecord(released.channels))) {
    const after = asRecord(asRecord(current.channels)[channel]);
    for (const [name, raw] of Object.entries(asRecord(asRecord(before).parameters))) {
      const now = asRecord(after.parameters)[name];
      if (now === undefined) continue; // gone with the address that held it: @asyncapi/diff reports the address
      const [was, is] = [enumOf(parameterOf(released, raw)), enumOf(parameterOf(current, now))];
      if (is === undefined) continue;
      const refused = was === undefined ? undefined : was.filter((v) => !is.includes(v));
      if (refused !== undefined && refused.length === 0) continue;
      const pointer = `/channels/${channel}/parameters/${name}/enum`;
      findings.push({
        kind: 'asyncapi',
        group: 'channels and operations',
        location: `channel ${channel}, parameter ${name}`,
        message:
          refused === undefined
            ? `an enum (${is.map((v) => `\`${v}\``).join(', ')}) now bounds \`${name}\`, which took any value: released clients subscribing with another are refused`
            : `values removed from \`${name}\`'s enum: ${refused.map((v) => `\`${v}\``).join(', ')}: released clients subscribing with them are refused`,
        rule: refused === undefined ? 'channel-parameter-enum-added' : 'channel-parameter-enum-value-removed',
        cause: `channel ${channel}: \`${name}\` narrowed`,
        contract: 'contracts/asyncapi.yaml',
        pointer,
      });
    }
  }
  return findings;
}
