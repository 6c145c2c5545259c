// An emulation of Google Tag Manager's sandbox for a web tag template (.tpl), to run its code in
// a real page: GTM runs templates only inside its own editor and containers, and Google
// publishes no runner to use outside them. The template's sandboxed JS gets `data` and a
// `require` whose APIs behave as Google documents them (developers.google.com/tag-manager/templates/api)
// and check every call against the permissions the template declares, as GTM does: a call a
// permission does not cover throws, and the tag fails. The page's globals are out of the code's
// reach, as in GTM: a template that uses window, document, setTimeout or a loaded script's
// global instead of an API fails its tag here too. Not reproduced: the language GTM's parser
// takes (ECMAScript 5.1 with some of ES6, such as const, let and arrow functions; no `new`), its
// deep copies of values crossing the sandbox, and its consent defaults per region.
import { readFileSync } from 'node:fs'

/** The sections of a .tpl file by name (___INFO___ → INFO). */
export function templateSections(path: string): Record<string, string> {
  const text = readFileSync(path, 'utf8')
  const sections: Record<string, string> = {}
  const parts = text.split(/^___([A-Z_]+)___$/m)
  for (let index = 1; index < parts.length; index += 2) sections[parts[index]] = parts[index + 1].trim()
  return sections
}

type Value = { type: number; string?: string; boolean?: boolean; listItem?: Value[]; mapKey?: Value[]; mapValue?: Value[] }

/** A permission's parameter as plain data: lists as arrays, maps as objects. */
const plain = (value: Value): unknown => {
  if (value.type == 1) return value.string
  if (value.type == 8) return value.boolean
  if (value.type == 2) return (value.listItem || []).map(plain)
  if (value.type == 3) return Object.fromEntries((value.mapKey || []).map((key, index) => [plain(key), plain(value.mapValue![index])]))
}

/** The template's permissions: for each publicId, its parameters as plain data. */
export function templatePermissions(path: string): Record<string, Record<string, unknown>> {
  const declared = JSON.parse(templateSections(path).WEB_PERMISSIONS) as { instance: { key: { publicId: string }; param?: { key: string; value: Value }[] } }[]
  return Object.fromEntries(
    declared.map(({ instance }) => [instance.key.publicId, Object.fromEntries((instance.param || []).map(({ key, value }) => [key, plain(value)]))])
  )
}

/**
 * The template's tests (___TESTS___), in the one form of GTM's YAML that the template writes:
 * `scenarios:`, each `- name:` with a `code: |-` block, then a `setup: |-` block run before each.
 * Anything else throws, rather than being skipped.
 */
export function templateTests(path: string): { setup: string; scenarios: { name: string; code: string }[] } {
  const scenarios: { name: string; lines: string[] }[] = []
  const setup: string[] = []
  // The block being read, and the indentation its lines have.
  let block: string[] | undefined
  let indent = ''
  for (const line of templateSections(path).TESTS.split('\n')) {
    if (block && (line.startsWith(indent) || line.trim() == '')) block.push(line.slice(indent.length))
    else if (line == 'scenarios:') block = undefined
    else if (line.startsWith('- name: ')) {
      scenarios.push({ name: line.slice('- name: '.length), lines: [] })
      block = undefined
    } else if (line == '  code: |-' && scenarios.length) {
      block = scenarios[scenarios.length - 1].lines
      indent = '    '
    } else if (line == 'setup: |-') {
      block = setup
      indent = '  '
    } else throw new Error('___TESTS___: cannot read the line ' + JSON.stringify(line))
  }
  return { setup: setup.join('\n').trim(), scenarios: scenarios.map(({ name, lines }) => ({ name, code: lines.join('\n').trim() })) }
}

/**
 * The page's globals a template might reach for instead of an API: the window under its names,
 * the DOM, storage, timers, the network, the console, ways to run code from a string, the
 * constructors GTM's sandbox has none of, and the globals of the scripts the template loads.
 */
const SHADOWED = [
  'window',
  'self',
  'globalThis',
  'top',
  'parent',
  'frames',
  'document',
  'location',
  'history',
  'navigator',
  'localStorage',
  'sessionStorage',
  'indexedDB',
  'setTimeout',
  'setInterval',
  'clearTimeout',
  'clearInterval',
  'requestAnimationFrame',
  'queueMicrotask',
  'fetch',
  'XMLHttpRequest',
  'console',
  'alert',
  'eval',
  'Function',
  'Promise',
  'Object',
  'Array',
  'JSON',
  'Math',
  'Date',
  'encodeURIComponent',
  'discoveryFeedback',
  'dataLayer'
]

/**
 * The page-side runner, as a script's text: it defines `window.runTemplate(data)`, which runs
 * the template's code with the emulated APIs and resolves nothing; the tag's outcome arrives
 * through data.gtmOnSuccess / data.gtmOnFailure. `window.gtmConsent` holds consent states (an
 * unset type counts as granted, as in GTM), `window.setGtmConsent(type, granted)` changes one
 * and calls the listeners, and `window.gtmCalls` lists every API call made.
 * `window.runTemplateTest(setup, code)` runs one scenario of the template's tests.
 */
export function sandboxRunner(path: string): string {
  const code = templateSections(path).SANDBOXED_JS_FOR_WEB_TEMPLATE
  const permissions = templatePermissions(path)
  return `(() => {
  const permissions = ${JSON.stringify(permissions)}
  const code = ${JSON.stringify(code)}
  const calls = (window.gtmCalls = [])
  window.gtmConsent = {}
  const listeners = []
  const storage = new Map()
  const injected = new Map()
  const denied = (api, why) => { throw new Error('Permission denied: ' + api + ': ' + why) }
  const globals = (permissions.access_globals || {}).keys || []
  const allowGlobal = (api, key, how) => {
    if (!globals.some((entry) => entry.key == key && entry[how])) denied(api, how + ' access to the global ' + key + ' is not declared')
  }
  const consentTypes = (permissions.access_consent || {}).consentTypes || []
  const allowConsent = (api, type) => {
    if (!consentTypes.some((entry) => entry.consentType == type && entry.read)) denied(api, 'reading consent ' + type + ' is not declared')
  }
  const pattern = (glob) => new RegExp('^' + glob.split('*').map((part) => part.replace(/[.+?^$()|[\\]{}\\\\\\/]/g, '\\\\$&')).join('.*') + '$')
  const at = (path) => path.split('.').reduce((object, name) => (object == null ? undefined : object[name]), window)
  const setAt = (path, value) => {
    const names = path.split('.')
    const last = names.pop()
    names.reduce((object, name) => object[name], window)[last] = value
  }
  const apis = {
    // Google: read and write access to both keys; creates a function under fnKey that pushes
    // its arguments to arrayKey, and returns it. Google does not say that a function already
    // there is kept, so this emulation replaces it, with a new, empty queue: a template that
    // calls it once the script has loaded loses the script's command function here.
    createArgumentsQueue(fnKey, arrayKey) {
      for (const key of [fnKey, arrayKey]) for (const how of ['read', 'write']) allowGlobal('createArgumentsQueue', key, how)
      setAt(fnKey, function () { at(arrayKey).push(arguments) })
      if (!Array.isArray(at(arrayKey))) setAt(arrayKey, [])
      return at(fnKey)
    },
    // Google: read access to the key. GTM returns a copy; this returns the value itself.
    copyFromWindow(key) {
      allowGlobal('copyFromWindow', key, 'read')
      return at(key)
    },
    // Google: 'array' and 'null' besides typeof's names.
    getType: (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value),
    // Google: execute access to the function's key; calls what the global is now.
    callInWindow(path, ...args) {
      allowGlobal('callInWindow', path, 'execute')
      const fn = at(path)
      return typeof fn == 'function' ? fn(...args) : undefined
    },
    // Google: one script element per cacheToken, later calls waiting for its outcome; without a
    // cacheToken, a new script element each call, even for the same URL.
    injectScript(url, onSuccess, onFailure, cacheToken) {
      const urls = (permissions.inject_script || {}).urls || []
      if (!urls.some((glob) => pattern(glob).test(url))) denied('injectScript', url + ' matches no declared URL pattern')
      const load = () => new Promise((resolve) => {
        const script = document.createElement('script')
        script.src = url
        script.onload = () => resolve(true)
        script.onerror = () => resolve(false)
        document.head.appendChild(script)
      })
      if (cacheToken == null) return void load().then((loaded) => (loaded ? onSuccess() : onFailure()))
      if (!injected.has(cacheToken)) injected.set(cacheToken, load())
      injected.get(cacheToken).then((loaded) => (loaded ? onSuccess() : onFailure()))
    },
    isConsentGranted(type) {
      allowConsent('isConsentGranted', type)
      return window.gtmConsent[type] !== false
    },
    addConsentListener(type, listener) {
      allowConsent('addConsentListener', type)
      listeners.push({ type, listener })
    },
    templateStorage: {
      getItem: (key) => {
        if (!permissions.access_template_storage) denied('templateStorage', 'not declared')
        return storage.has(key) ? storage.get(key) : null
      },
      setItem: (key, value) => {
        if (!permissions.access_template_storage) denied('templateStorage', 'not declared')
        storage.set(key, value)
      }
    }
  }
  // A template test's mocks (mock, mockObject), and every API call with its arguments, for its assertions.
  let mocks = new Map()
  const log = []
  const require = (name) => {
    if (!(name in apis)) throw new Error('this emulation has no ' + name)
    const api = apis[name]
    if (typeof api != 'function') return mocks.has(name) ? mocks.get(name) : api
    return (...args) => {
      calls.push([name, ...args.filter((arg) => typeof arg != 'function')])
      log.push([name, args])
      if (!mocks.has(name)) return api(...args)
      const mock = mocks.get(name)
      return typeof mock == 'function' ? mock(...args) : mock
    }
  }
  window.setGtmConsent = (type, granted) => {
    const before = window.gtmConsent[type] !== false
    window.gtmConsent[type] = granted
    // GTM calls a listener when the state changes between denied and granted.
    if (before != granted) listeners.filter((entry) => entry.type == type).forEach((entry) => entry.listener(type, granted))
  }
  // GTM runs the code outside the page's global scope: these names are parameters of the
  // function around it, all undefined, so that a template that reaches for one throws and its
  // tag fails. It runs in strict mode, so that 'this' in it is undefined rather than the window.
  const shadowed = ${JSON.stringify(SHADOWED)}
  const sandbox = (params, body) =>
    new Function(...shadowed, 'return function (' + params.join(', ') + ') {\\n"use strict";\\n' + body + '\\n}')(...shadowed.map(() => undefined))
  const template = sandbox(['require', 'data'], code)
  window.runTemplate = (data) => {
    try {
      template(require, data)
    } catch (error) {
      // A sandbox error fails the tag.
      calls.push(['error', String(error.message)])
      data.gtmOnFailure()
    }
  }

  // A scenario of the template's own tests (___TESTS___) with the test APIs GTM documents that
  // they use: 'passed', or why it failed.
  const same = (a, b) =>
    a === b ||
    (typeof a == 'object' && typeof b == 'object' && a !== null && b !== null && Array.isArray(a) == Array.isArray(b) &&
      Object.keys(a).length == Object.keys(b).length && Object.keys(a).every((key) => same(a[key], b[key])))
  const text = (value) => (typeof value == 'function' ? 'a function' : JSON.stringify(value))
  const check = (ok, what) => { if (!ok) throw new Error(what) }
  const argumentsOf = (name) => log.filter((entry) => entry[0] == name).map((entry) => entry[1])
  const testApis = {
    runCode: (data) => {
      const outcome = (name) => () => log.push([name, []])
      template(require, { ...data, gtmOnSuccess: outcome('gtmOnSuccess'), gtmOnFailure: outcome('gtmOnFailure') })
    },
    mock: (name, value) => void mocks.set(name, value),
    mockObject: (name, value) => void mocks.set(name, value),
    assertApi: (name) => ({
      wasCalled: () => check(argumentsOf(name).length > 0, name + ' was not called'),
      wasNotCalled: () => check(argumentsOf(name).length == 0, name + ' was called'),
      wasCalledWith: (...expected) =>
        check(argumentsOf(name).some((args) => same(args, expected)), name + ' was not called with ' + expected.map(text).join(', ') +
          '; its calls: ' + argumentsOf(name).map((args) => '(' + args.map(text).join(', ') + ')').join(' '))
    }),
    assertThat: (actual) => ({
      isEqualTo: (expected) => check(same(actual, expected), text(actual) + ' is not ' + text(expected)),
      isNotEqualTo: (expected) => check(!same(actual, expected), text(actual) + ' is ' + text(expected)),
      isTrue: () => check(actual === true, text(actual) + ' is not true'),
      isFalse: () => check(actual === false, text(actual) + ' is not false'),
      isUndefined: () => check(actual === undefined, text(actual) + ' is not undefined'),
      isDefined: () => check(actual !== undefined, 'it is undefined')
    }),
    fail: (message) => check(false, message)
  }
  window.runTemplateTest = (setup, scenario) => {
    mocks = new Map()
    log.length = 0
    storage.clear()
    try {
      sandbox(['require', ...Object.keys(testApis)], setup + '\\n' + scenario)(require, ...Object.values(testApis))
      return 'passed'
    } catch (error) {
      return String(error.message)
    } finally {
      mocks = new Map()
    }
  }
})()`
}
