/**
 * The endpoint, host and task pages and their JSON twins (docs/site.md "Endpoint, host and task pages"), written
 * by `npm run build:site` from the groups of `site/lib/endpoint-history.ts`, outside Astro's page pipeline as the
 * receipt pages are: each page fills the shared shell's slots (`core/page-shell.ts` `fillShell`), is
 * written, and dropped, so memory stays with the groups, not the pages. Also returns the search records of every
 * endpoint, host, service and task (`site/lib/search-index.ts`).
 */
import { type Alternative, alternativesOf } from '../../core/alternatives.ts';
import {
  endpointJsonPath,
  endpointKey,
  endpointPagePath,
  hostJsonPath,
  hostPagePath,
  taskPagePath,
} from '../../core/endpoint-paths.ts';
import {
  type EndpointCheck,
  type EndpointTimeline,
  endpointTimeline,
  formatDay,
  shortHex,
  timelineSvg,
} from '../../core/endpoint-timeline.ts';
import { escapeXml as e, formatCount, formatTime, formatUsd, reasonWords } from '../../core/format.ts';
import { fillShell, shortenedCode } from '../../core/page-shell.ts';
import { receiptUrlOf } from '../../core/receipt.ts';
import { HISTORY_DAYS, type SiteEndpoint, type SiteHistory, type TaskInfo } from './endpoint-history.ts';
import { badgePath, receiptPath } from './links.ts';
import { createPageWriter, type PageFiles, type PageWriter } from './page-writer.ts';

/** One record of the search index: a page, the words it is found by, and its title. */
export type SearchRecord = { url: string; title: string; kind: string; content: string };

/** What the pass wrote: page counts, the search records, and how many files were written or kept. */
export type EndpointPages = {
  endpoints: number;
  hosts: number;
  tasks: number;
  records: SearchRecord[];
  files: PageFiles;
};

type Fill = (title: string, description: string, body: string) => string;

/** What every page of the pass shares: the history, where pages go, the shell, and what is gathered on the way. */
type Pass = {
  history: SiteHistory;
  pages: PageWriter;
  baseUrl: string;
  fill: Fill;
  records: SearchRecord[];
  summaries: Map<string, EndpointSummary>;
};

/**
 * Writes every endpoint, host and task page and twin into `out` (the build's folder); returns counts and records.
 * With `previous` (the folder of the build served now), a page whose bytes are unchanged is linked from it rather
 * than written; with `recycled` (folders of an unkept build), the files of the others are reused
 * (`site/lib/page-writer.ts`).
 */
export function writeEndpointPages(
  history: SiteHistory,
  out: string,
  shell: readonly string[],
  baseUrl: string,
  previous: string | null = null,
  recycled: string | null = null,
): EndpointPages {
  const pages = createPageWriter(out, previous, recycled);
  const pass: Pass = {
    history,
    pages,
    baseUrl,
    fill: (title, description, body) => fillShell(shell, { title, description, body }),
    records: [],
    summaries: new Map(),
  };
  for (const endpoint of history.endpoints.values()) writeEndpoint(pass, endpoint);
  for (const [host, keys] of history.hosts) writeHost(pass, host, keys);
  for (const task of history.tasks) writeTask(pass, task);
  return {
    endpoints: history.endpoints.size,
    hosts: history.hosts.size,
    tasks: history.tasks.length,
    records: pass.records,
    files: pages.finish(),
  };
}

function writeEndpoint(pass: Pass, endpoint: SiteEndpoint): void {
  const { history, baseUrl } = pass;
  const timeline = endpointTimeline(endpoint.checks, history.from, history.to);
  // The group's checks are no longer needed: the timeline holds those of the window.
  endpoint.checks = [];
  const summary = summaryOf(endpoint, timeline);
  pass.summaries.set(endpoint.key, summary);
  pass.pages.put(
    `endpoints/${endpoint.key}/index.html`,
    endpointPage(endpoint, timeline, history, baseUrl, pass.fill),
  );
  pass.pages.put(
    `endpoints/${endpoint.key}.json`,
    `${JSON.stringify(endpointJson(endpoint, timeline, history, baseUrl), null, 2)}\n`,
  );
  pass.records.push({
    url: endpointPagePath(endpoint.key),
    kind: 'endpoint',
    title: `${endpoint.method} ${endpoint.url}`,
    content: [
      `Endpoint ${endpoint.method} ${endpoint.url}`,
      `host ${endpoint.host}`,
      summary.verdict === null ? 'not checked in the window' : `latest verdict ${summary.verdict}`,
      summary.reason ?? '',
      endpoint.listing?.source_list ? `listed by ${endpoint.listing.source_list}` : '',
      ...endpoint.tasks.map((t) => `task ${t.task} service ${t.service_id}`),
    ].join('. '),
  });
  for (const task of endpoint.tasks)
    pass.records.push({
      url: `${endpointPagePath(endpoint.key)}#known-answers`,
      kind: 'service',
      title: `Service ${task.service_id}`,
      content: `Service ${task.service_id}. Task ${task.task}. ${passText(task)}. Host ${endpoint.host}.`,
    });
}

function writeHost(pass: Pass, host: string, keys: readonly string[]): void {
  const list = keys.map((key) => pass.summaries.get(key) as EndpointSummary);
  pass.pages.put(`hosts/${host}/index.html`, hostPage(host, list, pass.history, pass.fill));
  pass.pages.put(`hosts/${host}.json`, `${JSON.stringify(hostJson(host, list), null, 2)}\n`);
  pass.records.push({
    url: hostPagePath(host),
    kind: 'host',
    title: `Host ${host}`,
    content: `Host ${host}: ${list.length} endpoint${list.length === 1 ? '' : 's'}. ${list
      .slice(0, 50)
      .map((s) => `${s.method} ${s.url}`)
      .join(' ')}`,
  });
}

function writeTask(pass: Pass, task: TaskInfo): void {
  pass.pages.put(`tasks/${task.name}/index.html`, taskPage(task, pass.history, pass.summaries, pass.fill));
  pass.records.push({
    url: taskPagePath(task.name),
    kind: 'task',
    title: `Task ${task.name}`,
    content: `Task ${task.name}. ${task.title ?? ''}. ${task.description}. ${task.candidates.join(' ')}`,
  });
}

/** What the host and task pages show of an endpoint. */
type EndpointSummary = {
  key: string;
  url: string;
  method: string;
  verdict: string | null;
  reason: string | null;
  price_usd: number | null;
  checked_at: string | null;
  stable_days: number | null;
  at_least: boolean;
  /** When the published crawl found it no longer listed (`SiteEndpoint.delisted`); null when it is listed. */
  delisted_at: string | null;
  tasks: SiteEndpoint['tasks'];
};

function summaryOf(endpoint: SiteEndpoint, timeline: EndpointTimeline): EndpointSummary {
  const latest = timeline.checks.at(-1) ?? null;
  return {
    key: endpoint.key,
    url: endpoint.url,
    method: endpoint.method,
    verdict: latest?.verdict ?? null,
    reason: latest?.reason ?? null,
    price_usd: latest?.price_usd ?? null,
    checked_at: latest?.at ?? null,
    stable_days: timeline.stable?.days ?? null,
    at_least: timeline.stable?.at_least ?? false,
    delisted_at: endpoint.delisted?.delisted_at ?? null,
    tasks: endpoint.tasks,
  };
}

/** A link to a receipt: its page when this build has one, else its permalink, answered by the API. */
function receiptHref(id: string, history: SiteHistory, baseUrl: string): string {
  return history.receiptPages.has(id)
    ? receiptPath(id)
    : (history.permalinks.get(id) ?? receiptUrlOf(baseUrl, id));
}

function verdictHtml(verdict: string | null): string {
  return verdict === null
    ? '<span class="muted">not checked</span>'
    : `<span class="v-${e(verdict)}">${e(verdict)}</span>`;
}

/** A long hex value shortened, the whole value in its title and in a copy button's data. */
function hexHtml(value: string | null): string {
  if (value === null) return '—';
  const short = shortHex(value);
  if (short === value) return `<code>${e(value)}</code>`;
  return shortenedCode(value, short);
}

function stableText(days: number | null, atLeast: boolean): string {
  if (days === null) return '—';
  const unit = days === 1 ? 'day' : 'days';
  return atLeast ? `at least ${days} ${unit}` : `${days} ${unit}`;
}

function passText(task: {
  checked: number;
  passes: number;
  pass_rate: number | null;
  calls: number;
}): string {
  if (task.calls === 0) return 'no paid call yet';
  if (task.pass_rate === null)
    return `${task.calls} paid call${task.calls === 1 ? '' : 's'}, no answer checked`;
  return `known-answer pass rate ${Math.round(task.pass_rate * 100)} % (${task.passes} of ${task.checked} checked answers)`;
}

function endpointPage(
  endpoint: SiteEndpoint,
  timeline: EndpointTimeline,
  history: SiteHistory,
  baseUrl: string,
  fill: Fill,
): string {
  const latest = timeline.checks.at(-1) ?? null;
  const name = `${endpoint.method} ${endpoint.url}`;
  const href = (id: string) => receiptHref(id, history, baseUrl);
  const parts = [
    `<h1>Endpoint <code>${e(name)}</code></h1>`,
    `<p>Host <a href="${e(hostPagePath(endpoint.host))}">${e(endpoint.host)}</a>. The same facts as JSON: <a href="${e(endpointJsonPath(endpoint.key))}">${e(endpointJsonPath(endpoint.key))}</a>.</p>`,
    latestHtml(latest, href),
    history.badgeHosts.has(endpoint.host) ? endpointBadgeHtml(endpoint) : '',
    stableHtml(timeline.stable),
    `<h2>The last ${HISTORY_DAYS} days</h2>`,
    windowHtml(timeline, name, href),
    '<h2>Where it is listed</h2>',
    delistedHtml(endpoint),
    listingHtml(endpoint),
    endpoint.tasks.length > 0 ? knownAnswersHtml(endpoint, history, baseUrl) : '',
    checkNowHtml(endpoint, baseUrl),
  ];
  const description =
    latest === null
      ? `Spotcheck history of ${name}.`
      : `${name}: ${latest.verdict} (${latest.reason}) on ${formatDay(latest.at)}; the last ${HISTORY_DAYS} days of price, wallet, network and verdicts.`;
  return fill(`Endpoint ${name}`, description, parts.join(''));
}

type Href = (receiptId: string) => string;

function latestHtml(latest: EndpointCheck | null, href: Href): string {
  if (latest === null)
    return `<p class="latest muted">Not checked by a published crawl in the last ${HISTORY_DAYS} days.</p>`;
  return `<p class="latest">Latest check, ${e(formatTime(latest.at))}: ${verdictHtml(latest.verdict)} (<code>${e(latest.reason)}</code>). ${e(reasonWords(latest.reason))} <a href="${e(href(latest.receipt_id))}">Its receipt <code>${e(latest.receipt_id)}</code></a>.</p>`;
}

function endpointBadgeHtml(endpoint: SiteEndpoint): string {
  return `<p><a href="${e(badgePath(endpoint.host, 'page'))}"><img src="${e(badgePath(endpoint.host, 'svg'))}" alt="Spotcheck status badge of ${e(endpoint.host)}" height="20"></a> the badge of its host; for this endpoint alone the live server draws <code>${e(`/badge/${endpoint.host}.svg?path=${new URL(endpoint.url_norm).pathname}`)}</code>.</p>`;
}

function stableHtml(stable: EndpointTimeline['stable']): string {
  return stable === null
    ? `<p>No payment terms were read in the last ${HISTORY_DAYS} days.</p>`
    : `<p class="stable">Payment terms (price, wallet, network) unchanged for <strong>${e(stableText(stable.days, stable.at_least))}</strong>, since ${e(formatDay(stable.since))}${stable.at_least ? ', the first check of the window' : ''}.</p>`;
}

/** The window: the timeline, its changes of terms, and the same facts as a table. */
function windowHtml(timeline: EndpointTimeline, name: string, href: Href): string {
  if (timeline.checks.length === 0) return '<p class="muted">No check in the window.</p>';
  const title = `Price, wallet and network changes and verdicts of ${name}, ${formatDay(timeline.from)} to ${formatDay(timeline.to)}`;
  const parts = [
    `<figure class="timeline"><div class="wide" tabindex="0" role="region" aria-label="Timeline, scrolls sideways on a narrow screen">${timelineSvg(timeline, title)}</div><figcaption>${timeline.checks.length} check${timeline.checks.length === 1 ? '' : 's'}, ${timeline.changes.length === 0 ? 'no change of terms' : `${timeline.changes.length} change${timeline.changes.length === 1 ? '' : 's'} of terms`}. The table below holds the same facts.</figcaption></figure>`,
  ];
  if (timeline.changes.length > 0) {
    parts.push(
      '<h3>Changes of terms</h3><ul class="changes">',
      ...timeline.changes.map(
        (c) =>
          `<li>${e(formatDay(c.at))}: ${c.field === 'pay_to' ? 'wallet' : c.field === 'network' ? 'network' : 'price'} ${c.field === 'price_usd' ? e(formatUsd(c.from as number | null)) : hexHtml(c.from as string | null)} → ${c.field === 'price_usd' ? e(formatUsd(c.to as number | null)) : hexHtml(c.to as string | null)} (<a href="${e(href(c.receipt_id))}">receipt</a>)</li>`,
      ),
      '</ul>',
    );
  }
  parts.push(
    '<div class="wide"><table class="rows"><caption class="muted">Checks in the window, oldest first; checks in a row with the same verdict and terms are one line</caption>',
    '<thead><tr><th scope="col">When</th><th scope="col">Verdict</th><th scope="col">Why</th><th scope="col">Price</th><th scope="col">Wallet</th><th scope="col">Network</th><th scope="col">Receipt</th></tr></thead><tbody>',
    ...timeline.rows.map(
      (r) =>
        `<tr><td data-label="When">${e(r.first === r.last ? formatTime(r.first) : `${formatDay(r.first)} to ${formatDay(r.last)} (${r.checks} checks)`)}</td><td data-label="Verdict">${verdictHtml(r.verdict)}</td><td data-label="Why"><code>${e(r.reason)}</code></td><td data-label="Price">${e(formatUsd(r.price_usd))}</td><td data-label="Wallet">${hexHtml(r.pay_to)}</td><td data-label="Network">${r.network === null ? '—' : `<code>${e(r.network)}</code>`}</td><td data-label="Receipt"><a href="${e(href(r.receipt_id))}">${e(r.receipt_id)}</a></td></tr>`,
    ),
    '</tbody></table></div>',
  );
  return parts.join('');
}

function knownAnswersHtml(endpoint: SiteEndpoint, history: SiteHistory, baseUrl: string): string {
  return [
    `<h2 id="known-answers">Known-answer checks</h2><p>A candidate of the catalog: the service's own paid calls check its answers against known ones${history.knownAnswerRun === null ? '' : ` (run <code>${e(history.knownAnswerRun)}</code>)`}.</p><ul>`,
    ...endpoint.tasks.map(
      (t) =>
        `<li>Task <a href="${e(taskPagePath(t.task))}">${e(t.task)}</a>, service <code>${e(t.service_id)}</code>: ${e(passText(t))}.</li>`,
    ),
    '</ul>',
    alternativesHtml(endpoint, history, baseUrl),
  ].join('');
}

function checkNowHtml(endpoint: SiteEndpoint, baseUrl: string): string {
  return `<h2>Check it now</h2><p>The live API checks it on request: <code class="u">${e(`${baseUrl}/v1/products/endpoint-spot-check?url=${encodeURIComponent(endpoint.url)}${endpoint.method === 'GET' ? '' : `&method=${endpoint.method}`}`)}</code>; its latest public receipt: <code class="u">${e(`${baseUrl}/v1/receipts/by-url?url=${encodeURIComponent(endpoint.url)}`)}</code>.</p>`;
}

/**
 * The alternatives a skip of this endpoint's check naming `task` would list (docs/api.md §2.1 `alternatives`), from
 * the published known-answer run's calls; no ceiling, since no caller named a price.
 */
function alternativesFor(
  endpoint: SiteEndpoint,
  task: string,
  history: SiteHistory,
  baseUrl: string,
): Alternative[] {
  return alternativesOf(history.paidCalls, { task, maxPriceUsd: null, checkedUrl: endpoint.url, baseUrl });
}

/** The alternatives of each task, linking each service to its endpoint page when it has one. */
function alternativesHtml(endpoint: SiteEndpoint, history: SiteHistory, baseUrl: string): string {
  const out = [
    '<h2 id="alternatives">Alternatives</h2>',
    '<p>What a check of this endpoint naming its task lists when it ends in skip: the other services of the task as the lookup ranks them (known-answer pass rate, then price).</p>',
  ];
  for (const t of endpoint.tasks) {
    const method = history.tasks.find((task) => task.name === t.task)?.method ?? endpoint.method;
    const list = alternativesFor(endpoint, t.task, history, baseUrl);
    out.push(
      `<h3>Task <a href="${e(taskPagePath(t.task))}">${e(t.task)}</a></h3>`,
      list.length === 0
        ? '<p class="muted">No other service of this task has a paid call in the published run.</p>'
        : `<ol class="alternatives">${list.map((a) => alternativeHtml(a, method, history)).join('')}</ol>`,
    );
  }
  return out.join('');
}

function alternativeHtml(a: Alternative, method: string, history: SiteHistory): string {
  const key = endpointKey(a.endpoint, method);
  const name = history.endpoints.has(key)
    ? `<a href="${e(endpointPagePath(key))}">${e(a.service_id)}</a>`
    : `<code>${e(a.service_id)}</code>`;
  const rate = a.pass_rate === null ? 'no answer checked' : `pass rate ${Math.round(a.pass_rate * 100)} %`;
  const receipt = a.receipt_url === null ? '' : `, <a href="${e(a.receipt_url)}">latest receipt</a>`;
  return `<li>${name}: ${e(formatUsd(a.price_usd))}, ${e(rate)}${receipt}</li>`;
}

function delistedHtml(endpoint: SiteEndpoint): string {
  const d = endpoint.delisted;
  if (d === null) return '';
  const source = d.source_list === '' ? '' : ` (last listed by <code>${e(d.source_list)}</code>)`;
  return `<p class="disputed"><strong>Delisted</strong> on ${e(formatDay(d.delisted_at))}: no source lists it any more${source}, as the crawl run <code>${e(d.delisted_in_run)}</code> found. What follows is where it was listed.</p>`;
}

function listingHtml(endpoint: SiteEndpoint): string {
  const listing = endpoint.listing;
  if (listing === null || listing.source_list === null)
    return '<p class="muted">No published crawl listed it in the window (it was checked through the bazaar, a save or the catalog).</p>';
  const sources = [listing.source_list, ...listing.also_listed_in];
  const out = [
    `<p>Listed by ${sources.map((s) => `<code>${e(s)}</code>`).join(', ')}${listing.also_listed_in.length > 0 ? ` (the expectation comes from <code>${e(listing.source_list)}</code>, the first by name)` : ''}.</p>`,
  ];
  if (listing.disputed.length > 0) {
    out.push(
      `<p class="disputed"><strong>Disputed listing:</strong> its listings disagree on ${listing.disputed.map((f) => `<code>${e(f)}</code>`).join(', ')}, so it is held to none of them (docs: the rules page).</p>`,
    );
    if (listing.dispute_listings.length > 0)
      out.push(
        '<div class="wide"><table class="rows"><caption class="muted">The disagreeing listings</caption><thead><tr><th scope="col">Source</th><th scope="col">Price</th><th scope="col">Wallet</th><th scope="col">Network</th></tr></thead><tbody>',
        ...listing.dispute_listings.map(
          (l) =>
            `<tr><td data-label="Source"><code>${e(String(l.source ?? '—'))}</code>${l.first_party === true ? ' (the origin’s own)' : ''}</td><td data-label="Price">${e(formatUsd(typeof l.price_usd === 'number' ? l.price_usd : null))}</td><td data-label="Wallet">${hexHtml(typeof l.pay_to === 'string' ? l.pay_to : null)}</td><td data-label="Network">${e(typeof l.network === 'string' ? l.network : '—')}</td></tr>`,
        ),
        '</tbody></table></div>',
      );
  } else {
    out.push(
      `<dl class="facts"><dt>Listed price</dt><dd>${e(formatUsd(listing.listed_price_usd))}</dd><dt>Listed wallet</dt><dd>${hexHtml(listing.listed_pay_to)}</dd><dt>Listed network</dt><dd>${listing.listed_network === null ? '—' : `<code>${e(listing.listed_network)}</code>`}</dd></dl>`,
    );
  }
  return out.join('');
}

function endpointJson(
  endpoint: SiteEndpoint,
  timeline: EndpointTimeline,
  history: SiteHistory,
  baseUrl: string,
) {
  const latest = timeline.checks.at(-1) ?? null;
  return {
    schema: 1,
    key: endpoint.key,
    url: endpoint.url,
    url_norm: endpoint.url_norm,
    method: endpoint.method,
    host: endpoint.host,
    window: { from: timeline.from, to: timeline.to, days: HISTORY_DAYS },
    latest:
      latest === null
        ? null
        : {
            receipt_id: latest.receipt_id,
            receipt_url: receiptUrlOf(baseUrl, latest.receipt_id),
            verdict: latest.verdict,
            reason: latest.reason,
            issued_at: latest.at,
          },
    stable_since: timeline.stable?.since ?? null,
    stable_for_days: timeline.stable?.days ?? null,
    stable_at_least: timeline.stable?.at_least ?? null,
    listing: endpoint.listing,
    delisted: endpoint.delisted,
    known_answers: endpoint.tasks,
    alternatives: Object.fromEntries(
      endpoint.tasks.map((t) => [t.task, alternativesFor(endpoint, t.task, history, baseUrl)]),
    ),
    changes: timeline.changes,
    checks: timeline.checks,
    page: `${baseUrl}${endpointPagePath(endpoint.key)}`,
    receipt_pages: timeline.checks.filter((c) => history.receiptPages.has(c.receipt_id)).length,
  };
}

function hostPage(host: string, list: readonly EndpointSummary[], history: SiteHistory, fill: Fill): string {
  const counts = { pay: 0, skip: 0, recheck: 0 } as Record<string, number>;
  for (const s of list) if (s.verdict !== null) counts[s.verdict] = (counts[s.verdict] ?? 0) + 1;
  const badge = history.badgeHosts.has(host)
    ? `<p><a href="${e(badgePath(host, 'page'))}"><img src="${e(badgePath(host, 'svg'))}" alt="Spotcheck status badge of ${e(host)}" height="20"></a> <a href="${e(badgePath(host, 'page'))}">its badge</a></p>`
    : '';
  const body = [
    `<h1>Host <code>${e(host)}</code></h1>`,
    badge,
    `<p>${formatCount(list.length)} endpoint${list.length === 1 ? '' : 's'} checked in the last ${HISTORY_DAYS} days: ${counts.pay ?? 0} pay, ${counts.skip ?? 0} skip, ${counts.recheck ?? 0} recheck at their latest check. As JSON: <a href="${e(hostJsonPath(host))}">${e(hostJsonPath(host))}</a>.</p>`,
    '<div class="wide"><table class="rows"><caption class="muted">Endpoints of this host by URL, with their latest check</caption>',
    '<thead><tr><th scope="col">Endpoint</th><th scope="col">Latest</th><th scope="col">Why</th><th scope="col">Price</th><th scope="col">Terms stable</th><th scope="col">Checked</th></tr></thead><tbody>',
    ...list.map(
      (s) =>
        `<tr><td data-label="Endpoint" class="u"><a href="${e(endpointPagePath(s.key))}">${e(`${s.method} ${s.url}`)}</a>${s.delisted_at === null ? '' : ` <span class="muted">delisted ${e(formatDay(s.delisted_at))}</span>`}</td><td data-label="Latest">${verdictHtml(s.verdict)}</td><td data-label="Why">${s.reason === null ? '—' : `<code>${e(s.reason)}</code>`}</td><td data-label="Price">${e(formatUsd(s.price_usd))}</td><td data-label="Terms stable">${e(stableText(s.stable_days, s.at_least))}</td><td data-label="Checked">${e(formatTime(s.checked_at))}</td></tr>`,
    ),
    '</tbody></table></div>',
  ].join('');
  return fill(
    `Host ${host}`,
    `The x402 endpoints of ${host} Spotcheck checked, with their latest verdicts.`,
    body,
  );
}

function hostJson(host: string, list: readonly EndpointSummary[]) {
  return {
    schema: 1,
    host,
    endpoints: list.map((s) => ({
      key: s.key,
      url: s.url,
      method: s.method,
      page: endpointPagePath(s.key),
      verdict: s.verdict,
      reason: s.reason,
      price_usd: s.price_usd,
      checked_at: s.checked_at,
      stable_for_days: s.stable_days,
      delisted_at: s.delisted_at,
    })),
  };
}

function taskPage(
  task: TaskInfo,
  history: SiteHistory,
  summaries: Map<string, EndpointSummary>,
  fill: Fill,
): string {
  const rows: string[] = [];
  for (const summary of summaries.values()) {
    const record = summary.tasks.find((t) => t.task === task.name);
    if (record === undefined) continue;
    rows.push(
      `<tr><td data-label="Service" class="u"><a href="${e(endpointPagePath(summary.key))}">${e(record.service_id)}</a></td><td data-label="Known answers">${e(passText(record))}</td><td data-label="Latest check">${verdictHtml(summary.verdict)}</td><td data-label="Price">${e(formatUsd(summary.price_usd))}</td></tr>`,
    );
  }
  const body = [
    `<h1>Task <code>${e(task.name)}</code></h1>`,
    task.title === null ? '' : `<p><strong>${e(task.title)}</strong></p>`,
    `<p>${e(task.description)} Called with ${e(task.method)}.</p>`,
    `<p>${task.candidates.length} candidate${task.candidates.length === 1 ? '' : 's'}${history.knownAnswerRun === null ? '' : `, checked by the known-answer run <code>${e(history.knownAnswerRun)}</code>`}. The ranked lookup is the live API's <code>/v1/lookup?task=${e(task.name)}</code>.</p>`,
    '<div class="wide"><table class="rows"><caption class="muted">Candidate services of this task</caption><thead><tr><th scope="col">Service</th><th scope="col">Known answers</th><th scope="col">Latest check</th><th scope="col">Price</th></tr></thead><tbody>',
    ...rows,
    '</tbody></table></div>',
  ].join('');
  return fill(`Task ${task.name}`, `${task.description}`, body);
}
