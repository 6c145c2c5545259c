// @vitest-environment node
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, describe, expect, it } from 'vitest'
import { createRelay, forwardSink } from '../../src/relay'
import { envelopeSchema, errorsOf, openapi, openapiSchema } from '../support/contract'
import { envelope, recordingSink } from '../relay/support'

/*
 * schema/openapi.json describes the collector protocol and the service route. Here it is
 * checked as an OpenAPI 3.1 document, and then held to what the relay really answers: each
 * status it gives must be documented for its method, with a body of the documented schema and
 * only documented headers; and what the relay's forwardSink sends to the service must be the
 * documented service request.
 */

const ORIGIN = 'https://www.shop.example'
const URL_ = ORIGIN + '/v3/feedback'

type Operation = { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }> }

/** The key of an operation's documented answer for a status: its own (`413`), or its class (`4XX`). */
function statusKey(method: string, path: string, status: number): string | undefined {
  const responses = (openapi.paths[path][method.toLowerCase()] as Operation).responses
  return [String(status), String(status)[0] + 'XX'].find((key) => key in responses)
}

// The headers any HTTP answer carries, which an OpenAPI document does not list.
const GENERIC_HEADERS = new Set(['content-type', 'content-length', 'vary'])

/** What is wrong with an answer against the document: an undocumented status, media type, body or header. */
async function faultsOf(method: string, answer: Response, path = '/v3/feedback'): Promise<string[]> {
  const name = `${method} ${answer.status}`
  const key = statusKey(method, path, answer.status)
  if (!key) return [name + ' is not documented']
  const response = (openapi.paths[path][method.toLowerCase()] as Operation).responses[key]
  const headers = Object.keys(response.headers ?? {}).map((header) => header.toLowerCase())
  const faults: string[] = []
  answer.headers.forEach((_, header) => {
    if (!GENERIC_HEADERS.has(header) && !headers.includes(header)) faults.push(`${name}: header ${header} is not documented`)
  })
  const type = (answer.headers.get('content-type') ?? '').split(';')[0]
  const text = await answer.text()
  if (!response.content) return text ? [...faults, name + ' has a body the document does not describe'] : faults
  if (!(type in response.content)) return [...faults, `${name}: ${type} is not documented`]
  if (type != 'application/json') return faults
  const pointer = ['#/paths', path.replaceAll('/', '~1'), method.toLowerCase(), 'responses', key, 'content', type.replace('/', '~1'), 'schema'].join('/')
  return [...faults, ...errorsOf(openapiSchema(pointer), JSON.parse(text)).map((error) => `${name}: ${error}`)]
}

const post = (body: unknown, query = '', headers: Record<string, string> = {}) =>
  new Request(URL_ + query, {
    method: 'POST',
    headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8', ...headers },
    body: typeof body == 'string' ? body : JSON.stringify(body)
  })

/** A POST whose body never ends: its first bytes arrive, the rest never does. */
const unfinished = () =>
  new Request(URL_, {
    method: 'POST',
    headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8' },
    body: new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('[{"event":')) }),
    duplex: 'half'
  } as RequestInit)

const recording = recordingSink()
const relay = (options: Partial<Parameters<typeof createRelay>[0]> = {}) =>
  createRelay({ keys: ['KEY'], sink: recording.sink, origins: '*', rateLimit: false, ...options })
const failing = async () => {
  throw new Error('the service is down')
}

describe('schema/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, its references to envelope.json included', async () => {
    const validator = new Validator()
    await validator.addSpecRef(envelopeSchema, 'envelope.json')
    const result = await validator.validate(openapi)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
  })

  it('documents every answer the relay gives, with its body and headers', async () => {
    const shared = relay()
    // A bucket of one event: the second request from the same address is over it.
    const limited = relay({ rateLimit: { burst: 1, perSecond: 0.001 } })
    const shopper = { remoteAddress: '203.0.113.7' }
    const stored = envelope()
    await shared.fetch(post([stored]))
    const answers: [string, Response][] = [
      ['POST', await shared.fetch(post([envelope(), envelope()], '?t_sent=' + Date.now()))],
      ['POST', await shared.fetch(post([stored], '?t_sent=' + Date.now() + '&unconfirmed=' + stored.event_id + ',never-sent', { cookie: 'df_uid=uid-1' }))],
      ['POST', await shared.fetch(post([], '?unconfirmed=a,b'))],
      ['POST', await shared.fetch(post([envelope(), envelope({ properties: { item_id: 42 } })]))],
      ['POST', await shared.fetch(post(envelope()))],
      ['POST', await shared.fetch(post([envelope({ properties: {} })]))],
      ['POST', await shared.fetch(post('not json'))],
      ['POST', await shared.fetch(post([envelope({ key: undefined })]))],
      ['POST', await shared.fetch(post([envelope({ key: 'OTHER' })]))],
      ['POST', await shared.fetch(post(Array.from({ length: 501 }, () => envelope())))],
      ['POST', await relay({ maxBodyBytes: 100 }).fetch(post([envelope()]))],
      ['POST', await relay({ bodyTimeoutMs: 50 }).fetch(unfinished())],
      ['POST', await limited.fetch(post([envelope()]), shopper)],
      ['POST', await limited.fetch(post([envelope()]), shopper)],
      ['POST', await relay({ sink: failing }).fetch(post([envelope()]))],
      ['PUT', await shared.fetch(new Request(URL_, { method: 'PUT', body: '[]' }))],
      ['OPTIONS', await shared.fetch(new Request(URL_, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } }))],
      ['GET', await shared.fetch(new Request(URL_ + '?key=KEY&event=click-item&properties[item_id]=42&user[uid]=u&user[sid]=s&t_client=1767261600000'))],
      ['GET', await shared.fetch(new Request(URL_ + '?key=KEY'))],
      ['GET', await shared.fetch(new Request(URL_ + '?key=KEY&event=click-item&user[uid]=u&user[sid]=s&t_client=1767261600000'))],
      ['GET', await relay({ sink: failing }).fetch(new Request(URL_ + '?key=KEY&event=click-item&properties[item_id]=42&user[uid]=u&user[sid]=s&t_client=1'))]
    ]
    // Every status the document lists for POST came up.
    const statuses = new Set(answers.map(([method, answer]) => method + ' ' + answer.status))
    const listed = Object.keys(openapi.paths['/v3/feedback'].post.responses)
    expect(listed.filter((status) => !statuses.has('POST ' + status) && !(status == '405' && statuses.has('PUT 405')))).toEqual([])
    const faults = (await Promise.all(answers.map(([method, answer]) => faultsOf(method == 'PUT' ? 'POST' : method, answer)))).flat()
    expect(faults).toEqual([])
  })
})

describe('the service route', () => {
  const received: { url: string; headers: IncomingMessage['headers']; body: string }[] = []
  const service = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      received.push({ url: request.url!, headers: request.headers, body })
      response.writeHead(200).end()
    })
  })
  afterAll(() => new Promise((resolve) => service.close(resolve)))

  it("is what forwardSink sends in format 'spec': one SpecEnvelope a request, JSON, with X-Key", async () => {
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}/v3/events`
    const forwarding = createRelay({ keys: ['KEY'], sink: forwardSink({ url }), rateLimit: false })
    const purchase = envelope({
      event: 'purchase',
      properties: { order_id: '1001', currency: 'EUR', revenue: 10, line_items: [{ item_id: '1', variant_item_id: '1-1', unit_price: 10, quantity: 1 }] }
    })
    const answer = await forwarding.fetch(post([envelope(), purchase], '?t_sent=' + Date.now()))
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(2)
    const operation = openapi.paths['/v3/events'].post
    expect(Object.keys(operation.requestBody.content)).toContain('application/json')
    expect(operation.parameters.map(({ name }: { name: string }) => name)).toContain('X-Key')
    for (const { headers, body } of received) {
      expect(headers['content-type']).toBe('application/json')
      expect(headers['x-key']).toBe('KEY')
      expect(errorsOf(openapiSchema('#/components/schemas/SpecEnvelope'), JSON.parse(body))).toEqual([])
    }
  })

  it('refuses in SpecEnvelope what the service route never carries: an event id, a field of the relay', () => {
    const { event_id: _, ...spec } = envelope()
    const validate = openapiSchema('#/components/schemas/SpecEnvelope')
    expect(errorsOf(validate, spec)).toEqual([])
    expect(validate({ ...spec, event_id: 'e-1' })).toBe(false)
    expect(validate({ ...spec, received_at: 1 })).toBe(false)
  })
})
