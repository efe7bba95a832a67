/**
 * Holds live answers to `/openapi.json`: the status must be one the operation documents, and a JSON body must
 * match that response's schema (JSON Schema 2020-12, as OpenAPI 3.1 uses it, checked by Ajv).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
  components: { schemas: Record<string, unknown> };
};

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/** A checker for one document. */
export function openApiChecker(doc: unknown) {
  const api = doc as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // The one format the published schemas use (`v.isoTimestamp()`), checked as RFC 3339 date-time.
  ajv.addFormat('date-time', (value: string) => ISO_TIME.test(value) && !Number.isNaN(Date.parse(value)));
  const compiled = new Map<string, ValidateFunction>();

  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      return inline(api.components.schemas[ref.slice('#/components/schemas/'.length)]);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value)]));
  };

  const templates = Object.keys(api.paths)
    .map((template) => ({ template, pattern: templatePattern(template) }))
    // Literal paths before templated ones (/v1/receipts/by-url is not a receipt id), then the template with the
    // most literal text (/badge/{host}.svg before /badge/{host}).
    .sort((a, b) => literalLength(b.template) - literalLength(a.template));

  return {
    /** The described path template a concrete path answers to, or null when none is described. */
    templateOf(method: string, path: string): string | null {
      const found = templates.find((entry) => entry.pattern.test(path));
      return found && api.paths[found.template]?.[method.toLowerCase()] ? found.template : null;
    },

    /**
     * Throws unless `response` (read from a clone) is documented for `method` on the path `template` and its
     * body matches; returns the parsed body.
     */
    async check(method: string, template: string, response: Response): Promise<unknown> {
      const operation = api.paths[template]?.[method.toLowerCase()];
      if (!operation) throw new Error(`openapi: ${method} ${template} is not described`);
      const documented = operation.responses[String(response.status)];
      if (!documented) throw new Error(`openapi: ${method} ${template} does not document ${response.status}`);
      const media = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
      const described = Object.keys(documented.content ?? {});
      if (described.length > 0 && !described.includes(media)) {
        throw new Error(
          `openapi: ${method} ${template} ${response.status} is ${media || 'untyped'}, documented as ${described.join(', ')}`,
        );
      }
      const schema = documented.content?.['application/json']?.schema;
      if (schema === undefined || media !== 'application/json') return null;
      const body: unknown = await response.clone().json();
      const key = `${method} ${template} ${response.status}`;
      let validate = compiled.get(key);
      if (!validate) {
        validate = ajv.compile(inline(schema) as object);
        compiled.set(key, validate);
      }
      if (!validate(body)) {
        throw new Error(
          `openapi: ${key} answer does not match: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 600)}`,
        );
      }
      return body;
    },
  };
}

/** A path template as a pattern: `{name}` is one path segment or part of one; everything else is literal. */
function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

/** How much of a template is literal; a path without parameters outranks every template. */
function literalLength(template: string): number {
  const literal = template.replace(/\{[^}]+\}/g, '').length;
  return template.includes('{') ? literal : Number.MAX_SAFE_INTEGER;
}
