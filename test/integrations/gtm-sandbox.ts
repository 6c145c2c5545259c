// An emulation of Google Tag Manager's sandbox for a web tag template (.tpl), to run its code in
// a real page: GTM runs templates only inside its own editor and containers, and Google
// publishes no runner to use outside them. The template's sandboxed JS gets `data` and a
// `require` whose APIs behave as Google documents them (developers.google.com/tag-manager/templates/api)
// and check every call against the permissions the template declares, as GTM does: a call a
// permission does not cover throws, and the tag fails. Not reproduced: GTM's ES5-only parser,
// its deep copies of values crossing the sandbox, and its consent defaults per region.
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
 * The page-side runner, as a script's text: it defines `window.runTemplate(data)`, which runs
 * the template's code with the emulated APIs and resolves nothing; the tag's outcome arrives
 * through data.gtmOnSuccess / data.gtmOnFailure. `window.gtmConsent` holds consent states (an
 * unset type counts as granted, as in GTM), `window.setGtmConsent(type, granted)` changes one
 * and calls the listeners, and `window.gtmCalls` lists every API call made.
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
    // Google: read and write access to both keys; returns the function created under fnKey
    // (the stub itself, not the global as it may later be).
    createArgumentsQueue(fnKey, arrayKey) {
      for (const key of [fnKey, arrayKey]) for (const how of ['read', 'write']) allowGlobal('createArgumentsQueue', key, how)
      if (typeof at(fnKey) != 'function') setAt(fnKey, function () { at(arrayKey).push(arguments) })
      if (!Array.isArray(at(arrayKey))) setAt(arrayKey, at(arrayKey) || [])
      return at(fnKey)
    },
    // Google: execute access to the function's key; calls what the global is now.
    callInWindow(path, ...args) {
      allowGlobal('callInWindow', path, 'execute')
      const fn = at(path)
      return typeof fn == 'function' ? fn(...args) : undefined
    },
    injectScript(url, onSuccess, onFailure, cacheToken) {
      const urls = (permissions.inject_script || {}).urls || []
      if (!urls.some((glob) => pattern(glob).test(url))) denied('injectScript', url + ' matches no declared URL pattern')
      const key = cacheToken || url
      if (!injected.has(key)) {
        injected.set(key, new Promise((resolve) => {
          const script = document.createElement('script')
          script.src = url
          script.onload = () => resolve(true)
          script.onerror = () => resolve(false)
          document.head.appendChild(script)
        }))
      }
      injected.get(key).then((loaded) => (loaded ? onSuccess() : onFailure()))
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
  const require = (name) => {
    if (!(name in apis)) throw new Error('this emulation has no ' + name)
    const api = apis[name]
    if (typeof api != 'function') return api
    return (...args) => {
      calls.push([name, ...args.filter((arg) => typeof arg != 'function')])
      return api(...args)
    }
  }
  window.setGtmConsent = (type, granted) => {
    const before = window.gtmConsent[type] !== false
    window.gtmConsent[type] = granted
    // GTM calls a listener when the state changes between denied and granted.
    if (before != granted) listeners.filter((entry) => entry.type == type).forEach((entry) => entry.listener(type, granted))
  }
  window.runTemplate = (data) => {
    try {
      new Function('require', 'data', code)(require, data)
    } catch (error) {
      // A sandbox error fails the tag.
      calls.push(['error', String(error.message)])
      data.gtmOnFailure()
    }
  }
})()`
}
