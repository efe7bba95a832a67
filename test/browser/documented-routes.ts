/**
 * Spotcheck's own paths named in backticks by the README, docs/ and the setup pack (the review's "docs say only
 * what is true"): `GET /v1/…`, `/badge/<host>.svg`, `/rules`… Other hosts' paths (a seller's `/paid`) are left out.
 */
import { readdir, readFile } from 'node:fs/promises';

export async function documentedRoutes(): Promise<string[]> {
  const files = [
    'README.md',
    ...(await readdir('docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
    'data/setup-pack/guide.md',
    ...(await readdir('data/setup-pack/prompts')).map((f) => `data/setup-pack/prompts/${f}`),
  ];
  const own =
    /^\/(v1\/|badge\/|rules|saves|bazaar|stats|verify|receipts\/|mcp$|openapi\.json|\.well-known\/jwks|healthz|$)/;
  const routes = new Set<string>();
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const match of text.matchAll(/`(?:(?:GET|POST)(?:\/POST)?\s+)?(\/[^`\s]*)`/g)) {
      const path = match[1] as string;
      if (own.test(path) && !/[*…]/.test(path)) routes.add(path);
    }
  }
  return [...routes].sort();
}

/** A documented route with its placeholders filled from one crawled receipt. */
export function fillRoute(route: string, receipt: { id: string; url: string; host: string }): string {
  return route
    .replaceAll(/<host>|\{host\}/g, receipt.host)
    .replaceAll(/<receipt_id>|<id>|\{receipt_id\}/g, receipt.id)
    .replace(/^\/v1\/receipts\/\{id\}/, `/v1/receipts/${receipt.id}`)
    .replace(/^\/receipts\/\{id\}/, `/receipts/${receipt.id}`)
    .replaceAll('{id}', 'inv-none')
    .replace(/\bN\b/g, '1')
    .replace(/url=(\.\.\.)?$/, `url=${encodeURIComponent(receipt.url)}`)
    .replace('page=&page_size=', 'page=1&page_size=10');
}
