/**
 * JSON Schema from the valibot schemas of `core/request-schemas.ts` and `core/answer-schemas.ts`, for
 * `/openapi.json` and the MCP tools. The input side is converted up to the first transformation (what a client
 * sends, not what the parser makes of it); checks that JSON Schema cannot state (`v.check`, `v.custom`) are left
 * out, so the published schema is never stricter than the route.
 */
import { type JsonSchema, toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

export type { JsonSchema };

/** A JSON Schema object without `$schema`: OpenAPI 3.1 and MCP clients (draft-07 Ajv) both take it as is. */
export function jsonSchemaOf(schema: v.GenericSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, {
    typeMode: 'input',
    errorMode: 'ignore',
    overrideSchema: keepDescription,
  });
  return rest;
}

/**
 * Input conversion stops at a field's first transformation, and with it drops a description that follows it in
 * the pipe (`UsdAmountField` ends in a transformation): put each member's description back on the object.
 */
function keepDescription(context: {
  valibotSchema: unknown;
  jsonSchema: JsonSchema;
}): JsonSchema | undefined {
  const entries = (context.valibotSchema as { entries?: Record<string, unknown> }).entries;
  const properties = context.jsonSchema.properties as Record<string, JsonSchema> | undefined;
  if (entries === undefined || properties === undefined) return undefined;
  let changed = false;
  const out = { ...properties };
  for (const [name, entry] of Object.entries(entries)) {
    const described = descriptionOf(entry);
    const property = out[name];
    if (described === undefined || property === undefined || property.description !== undefined) continue;
    out[name] = { ...property, description: described };
    changed = true;
  }
  return changed ? { ...context.jsonSchema, properties: out } : undefined;
}

/** The description of a schema's pipe, looking through `optional` and `nullable` wrappers. */
function descriptionOf(schema: unknown): string | undefined {
  const node = schema as { pipe?: Array<{ type: string; description?: unknown }>; wrapped?: unknown };
  const described = node.pipe?.findLast((item) => item.type === 'description')?.description;
  if (typeof described === 'string') return described;
  return node.wrapped === undefined ? undefined : descriptionOf(node.wrapped);
}

/** The JSON Schemas of each member of an object schema, for OpenAPI query parameters. */
export function propertiesOf(schema: v.GenericSchema): {
  properties: Record<string, JsonSchema>;
  required: string[];
} {
  const converted = jsonSchemaOf(schema);
  const properties = (converted.properties ?? {}) as Record<string, JsonSchema>;
  return { properties, required: converted.required ?? [] };
}
