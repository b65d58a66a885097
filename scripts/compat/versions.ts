/**
 * The REST versions of `info.x-api-versions` (openapi.yaml), which codegen turns into what
 * the server negotiates (VERSIONS, NEWEST) and into the Deprecation and Sunset headers. oasdiff
 * does not read that extension, so the gate judges it here:
 *
 * - the last listed version (NEWEST) is what a client that names no version gets: changing
 *   it changes their responses, so it fails (ship it as a release);
 * - a released version left out of the list is no longer served: that fails until its
 *   announced sunset has passed (then the removal is the documented last step);
 * - a sunset moved earlier cuts the notice released clients were given: that fails. A
 *   sunset added or moved later, a deprecation, a new version listed before the last: pass.
 */
import { asRecord, type Finding } from './types';

interface Version {
  version: number;
  sunset?: string;
}

function versionsOf(doc: Record<string, unknown>): Version[] {
  const list = asRecord(doc.info)['x-api-versions'];
  if (!Array.isArray(list)) return [];
  return list.flatMap((v: unknown) => {
    const { version, sunset } = asRecord(v);
    return typeof version === 'number' ? [{ version, ...(typeof sunset === 'string' ? { sunset } : {}) }] : [];
  });
}

const finding = (location: string, message: string, rule: string): Finding => ({
  kind: 'openapi',
  group: 'versions',
  location,
  message,
  rule,
  cause: `info.x-api-versions: ${message.split(': ')[0]}`,
  contract: 'contracts/openapi.yaml',
  pointer: '/info/x-api-versions',
});

export function checkVersions(released: Record<string, unknown>, current: Record<string, unknown>, now = Date.now()): Finding[] {
  const before = versionsOf(released);
  const after = versionsOf(current);
  if (before.length === 0) return [];
  const findings: Finding[] = [];
  const newestBefore = before[before.length - 1].version;
  const newestAfter = after.at(-1)?.version;
  if (newestAfter !== undefined && newestAfter !== newestBefore) {
    findings.push(
      finding(
        'clients that name no version',
        `the newest version changed from ${newestBefore} to ${newestAfter}: a request that names no version now gets version ${newestAfter}'s representation`,
        'api-version-newest-changed',
      ),
    );
  }
  // A sunset that is no date would be served as `Sunset: Invalid Date` and compare as nothing below.
  for (const v of after) {
    if (v.sunset !== undefined && Number.isNaN(Date.parse(v.sunset))) {
      findings.push(finding(`version ${v.version}`, `version ${v.version}'s sunset "${v.sunset}" is not a date: clients would be sent Sunset: Invalid Date`, 'api-version-sunset-invalid'));
    }
  }
  for (const v of before) {
    const still = after.find((a) => a.version === v.version);
    if (!still) {
      const sunsetPassed = v.sunset !== undefined && Date.parse(v.sunset) <= now;
      if (!sunsetPassed)
        findings.push(finding(`version ${v.version}`, `version ${v.version} removed before its sunset (${v.sunset ?? 'none announced'}): its clients are still promised it`, 'api-version-removed-before-sunset'));
      continue;
    }
    if (v.sunset !== undefined && still.sunset !== undefined && Date.parse(still.sunset) < Date.parse(v.sunset)) {
      findings.push(finding(`version ${v.version}`, `version ${v.version}'s sunset moved earlier, from ${v.sunset} to ${still.sunset}: the notice its clients were given is cut`, 'api-version-sunset-earlier'));
    }
  }
  return findings;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

/** Each operation's `x-sunset` (a deprecated operation's last day), by `METHOD path`. */
function operationSunsets(doc: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, item] of Object.entries(asRecord(doc.paths))) {
    for (const method of METHODS) {
      const sunset = asRecord(asRecord(item)[method])['x-sunset'];
      if (typeof sunset === 'string') out.set(`${method.toUpperCase()} ${path}`, sunset);
    }
  }
  return out;
}

/**
 * A deprecated operation's `x-sunset` moved earlier: the notice its clients were given (its
 * responses' `Sunset` header, the reference) is cut, and once that earlier day passes the gate
 * would let the path go. Fails, as a version's sunset moved earlier does; later, added or removed passes.
 */
export function checkOperationSunsets(released: Record<string, unknown>, current: Record<string, unknown>): Finding[] {
  const after = operationSunsets(current);
  const findings: Finding[] = [];
  for (const [operation, was] of operationSunsets(released)) {
    const now = after.get(operation);
    if (now === undefined || !(Date.parse(now) < Date.parse(was))) continue;
    const [method, path] = [operation.slice(0, operation.indexOf(' ')), operation.slice(operation.indexOf(' ') + 1)];
    const version = /^\/v(\d+)\//.exec(path)?.[1];
    findings.push({
      kind: 'openapi',
      group: version ? `REST v${version}` : 'every REST version',
      location: operation,
      message: `${operation}'s sunset moved earlier, from ${was} to ${now}: the notice its clients were given is cut`,
      rule: 'api-operation-sunset-earlier',
      cause: `${operation}: x-sunset moved earlier`,
      contract: 'contracts/openapi.yaml',
      pointer: `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/x-sunset`,
    });
  }
  return findings;
}
