/**
 * The rules document the site shows and publishes as `/rules.json`. One source, `core/rules.ts`: the copy the
 * crawl's code wrote into the published run, or, before the first crawl, the one this code builds.
 */
import type * as v from 'valibot';
import { rulesDocument } from '../../core/rules.ts';
import { current } from './collections.ts';
import { parseFile, Rules } from './schemas.ts';

/** The run's rules document, else this code's. */
export async function siteRules(): Promise<v.InferOutput<typeof Rules>> {
  return (await current('rules')) ?? parseFile(Rules, rulesDocument(), 'core/rules.ts rulesDocument()');
}
