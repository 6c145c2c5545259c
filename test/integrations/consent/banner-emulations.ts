// Stand-ins for the banners' own scripts, as their public APIs are documented: plain page
// JavaScript (strings, so that no test-side compilation reaches the page). Each exposes
// `window.banner` with `load()`, `accept()` and `withdraw()`, which change the platform's state
// first and raise its events after, as the real scripts do.

/** OneTrust (developer.onetrust.com javascript-events-guide): active groups, IsAlertBoxClosed, OnConsentChanged, OneTrustGroupsUpdated. */
export const ONETRUST = `
(function () {
  var closed = false, callbacks = []
  function apply(groups) {
    window.OnetrustActiveGroups = ',' + groups.join(',') + ','
    window.OptanonActiveGroups = window.OnetrustActiveGroups
    callbacks.forEach(function (callback) { callback(new CustomEvent('consent.onetrust', { detail: groups })) })
    if (typeof window.OptanonWrapper == 'function') window.OptanonWrapper()
    window.dispatchEvent(new CustomEvent('OneTrustGroupsUpdated', { detail: groups }))
  }
  window.banner = {
    load: function () {
      window.OneTrust = {
        IsAlertBoxClosed: function () { return closed },
        GetDomainData: function () { return { ConsentModel: { Name: 'opt-in' }, ShowAlertNotice: true } },
        OnConsentChanged: function (callback) { callbacks.push(callback) }
      }
      apply(['C0001'])
    },
    accept: function () { closed = true; apply(['C0001', 'C0002', 'C0003']) },
    withdraw: function () { closed = true; apply(['C0001']) }
  }
})()
`

/** Cookiebot (cookiebot.com/en/developer): Cookiebot.consent, hasResponse, CookiebotOnConsentReady/OnAccept/OnDecline. */
export const COOKIEBOT = `
(function () {
  var cookiebot = { consent: { necessary: true, preferences: false, statistics: false, marketing: false, method: null }, hasResponse: false }
  function raise(name) { window.dispatchEvent(new Event(name)) }
  window.banner = {
    load: function () { window.Cookiebot = cookiebot; raise('CookiebotOnConsentReady') },
    accept: function () {
      cookiebot.consent.statistics = cookiebot.consent.preferences = cookiebot.consent.marketing = true
      cookiebot.consent.method = 'explicit'
      cookiebot.hasResponse = true
      raise('CookiebotOnAccept')
    },
    withdraw: function () {
      cookiebot.consent.statistics = cookiebot.consent.preferences = cookiebot.consent.marketing = false
      cookiebot.hasResponse = true
      raise('CookiebotOnDecline')
    }
  }
})()
`

/**
 * Shopify's storefront Customer Privacy API (shopify.dev/docs/api/customer-privacy): loadFeatures
 * puts customerPrivacy on window.Shopify, a little later; a choice raises visitorConsentCollected.
 */
export const SHOPIFY = `
(function () {
  var consent = ''
  var customerPrivacy = {
    analyticsProcessingAllowed: function () { return consent == 'yes' },
    shouldShowBanner: function () { return consent == '' },
    currentVisitorConsent: function () { return { analytics: consent, marketing: consent, preferences: consent, sale_of_data: consent } }
  }
  var loading = []
  window.Shopify = {
    loadFeatures: function (features, callback) { loading.push(callback) }
  }
  function choose(answer) {
    consent = answer
    var allowed = answer == 'yes'
    document.dispatchEvent(new CustomEvent('visitorConsentCollected', {
      detail: { analyticsAllowed: allowed, marketingAllowed: allowed, preferencesAllowed: allowed, saleOfDataAllowed: allowed }
    }))
  }
  window.banner = {
    load: function () {
      window.Shopify.customerPrivacy = customerPrivacy
      loading.splice(0).forEach(function (callback) { callback() })
    },
    accept: function () { choose('yes') },
    withdraw: function () { choose('no') }
  }
})()
`
