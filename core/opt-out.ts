/**
 * The host-level opt-out list (docs/decisions.md "Politeness"): a seller who asks not to be probed is listed by host
 * name, and the crawl, the bazaar check and the watches never send it a request. An entry covers the host and every
 * name under it (`seller.example` covers `api.seller.example`), on any port; an entry with a port
 * (`seller.example:8443`) covers that port only. Pure: the files are read in `crawl/`.
 */
import * as v from 'valibot';

/** A parsed list: lower-case host names. */
export type OptOutList = ReadonlySet<string>;

/** A host name, optionally with a port (`seller.example:8443`: that port only). */
const HOST =
  /^(?=.{1,253}(?::\d{1,5})?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?::\d{1,5})?$/;

const OptOutFile = v.object({
  schema: v.literal(1),
  hosts: v.pipe(
    v.array(v.pipe(v.string(), v.toLowerCase(), v.regex(HOST, 'a host name such as seller.example'))),
    v.maxLength(100_000),
  ),
});

/**
 * Reads an opt-out file (`{ "schema": 1, "hosts": [...] }`); the message names the first bad entry. Our own file,
 * so a bad one is refused whole rather than half read.
 * @example parseOptOut({ schema: 1, hosts: ['seller.example'] })
 */
export function parseOptOut(value: unknown): { ok: true; list: OptOutList } | { ok: false; message: string } {
  const parsed = v.safeParse(OptOutFile, value);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join('.') ?? '';
    return { ok: false, message: `${path ? `${path}: ` : ''}${issue.message}` };
  }
  return { ok: true, list: new Set(parsed.output.hosts) };
}

/** Both lists in one. */
export function mergeOptOut(...lists: OptOutList[]): OptOutList {
  return new Set(lists.flatMap((list) => [...list]));
}

/**
 * Whether a URL host (`host` or `host:port`, as the plan keys it) is opted out: its name or a parent name is listed.
 * @example isOptedOut('api.seller.example:8443', new Set(['seller.example'])) // true
 */
export function isOptedOut(host: string, list: OptOutList): boolean {
  if (list.size === 0) return false;
  if (list.has(host.toLowerCase())) return true;
  let name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  name = name.toLowerCase().replace(/\.$/, '');
  for (;;) {
    if (list.has(name)) return true;
    const dot = name.indexOf('.');
    if (dot < 0) return false;
    name = name.slice(dot + 1);
  }
}

/** What the rules document says of the list. */
export const OPT_OUT_RULE =
  'A seller who asks not to be probed is put on the opt-out list by host name; the name and every name under it ' +
  'get no request from the crawl, the bazaar check or the watches from the next run on, and their listings are ' +
  'left out of the run (counted in run.json opted_out). A watch of a listed host is refused when made ' +
  '(host_opted_out), and an existing one is not probed again after the list names its host: it turns opted_out, ' +
  'with a signed watch_opted_out notice to its owner. Ask through the contact on this page.';
