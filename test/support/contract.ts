// The package's machine-readable contract (schema/), compiled for tests: the envelope's JSON
// Schema and the OpenAPI document's schemas, whose references to envelope.json resolve to it.
import { readFileSync } from 'node:fs'
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'

export const envelopeSchema = JSON.parse(readFileSync('schema/envelope.json', 'utf8'))
export const openapi = JSON.parse(readFileSync('schema/openapi.json', 'utf8'))
// Where the OpenAPI document sits beside envelope.json, so that its relative references resolve.
const OPENAPI_ID = new URL('openapi.json', envelopeSchema.$id).href

// Not strict: an OpenAPI document holds keywords of its own (paths, info) around its schemas.
const ajv = new Ajv2020({ strict: false, allErrors: true })
ajv.addSchema(envelopeSchema)
ajv.addSchema(openapi, OPENAPI_ID)

/** The validator of a schema in the OpenAPI document, by its JSON pointer (`#/components/schemas/Batch`). */
export function openapiSchema(pointer: string): ValidateFunction {
  const validate = ajv.getSchema(OPENAPI_ID + pointer)
  if (!validate) throw new Error('no schema at ' + pointer)
  return validate
}

/** Errors of `value` against a validator, or [] when it keeps it: for assertions that show what broke. */
export function errorsOf(validate: ValidateFunction, value: unknown): string[] {
  return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`)
}
