/*
 * The three open-source banners, unmodified from npm, each with its own documented Google
 * Consent Mode wiring, on a page with our adapter (googleConsentMode, given the script tag's
 * command function) and our script tag. The wirings are the README recipes. Each banner is
 * driven only through its own buttons, by CSS selectors of the markup it renders.
 *
 * - vanilla-cookieconsent 3.1: the page's gtag default, then the update its Consent Mode guide
 *   pushes from onConsent (a choice, and every later page with one) and onChange (a change in
 *   its preferences). It pushes nothing before a choice.
 * - Klaro 0.7: a service whose `callback` (called for every service whenever Klaro applies
 *   consent, on load too) pushes the update. On load, before a choice, that is an update
 *   denying: the early denial. Withdrawal is the service switched off in Klaro's modal.
 * - tarteaucitron 1.34: its built-in Consent Mode (googleConsentMode, on by default) with its
 *   gcmanalyticsstorage service. In its default "wait" state it runs the service's fallback on
 *   load, which pushes an update denying: the early denial. Its Deny button in the panel pushes
 *   nothing; tarteaucitron reloads the page as the panel closes, and the fallback then denies.
 */

export interface RealBanner {
  /** The page's markup around `ours` (our part, see below); `automated`: the engine shows navigator.webdriver. */
  page(ours: string, automated: boolean): string
  /** Whether the banner pushes an update denying on load, before the shopper has chosen. */
  deniesEarly: boolean
  /** A selector of the banner's first question, present once it shows. */
  shown: string
  /** The buttons clicked, in order, for each answer. */
  accept: string[]
  reject: string[]
  withdraw: string[]
}

const GTAG_SNIPPET = `<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}
gtag('consent', 'default', { ad_storage: 'denied', analytics_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' })</script>`

/** Our part of every page: the stub, the adapter following the data layer, then the script tag. */
export const ours = (stub: string, adapters: string, collector: string) =>
  `${stub}<script>${adapters}</script>
<script>consentAdapters.googleConsentMode({ consent: (state) => discoveryFeedback('consent', state) })</script>
<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${collector}"></script>`

const cookieconsent: RealBanner = {
  page: (ours, automated) => `${GTAG_SNIPPET}
${ours}
<link rel="stylesheet" href="/vendor/cookieconsent/cookieconsent.css">
<body><button type="button" data-cc="show-preferencesModal">Cookie settings</button>
<script src="/vendor/cookieconsent/cookieconsent.umd.js"></script>
<script>
  // The update as its Consent Mode guide has it: the analytics_storage service of the analytics category.
  const updateGtagConsent = () =>
    gtag('consent', 'update', { analytics_storage: CookieConsent.acceptedService('analytics_storage', 'analytics') ? 'granted' : 'denied' })
  CookieConsent.run({
    ${automated ? '// Firefox and WebKit under automation show navigator.webdriver; the banner would hide from them.\n    hideFromBots: false,' : ''}
    categories: {
      necessary: { enabled: true, readOnly: true },
      analytics: { services: { analytics_storage: { label: 'Analytics storage' } } }
    },
    onConsent: updateGtagConsent,
    onChange: updateGtagConsent,
    language: {
      default: 'en',
      translations: {
        en: {
          consentModal: { title: 'Cookies', description: 'We measure what you search.', acceptAllBtn: 'Accept all', acceptNecessaryBtn: 'Reject all', showPreferencesBtn: 'Manage' },
          preferencesModal: {
            title: 'Cookie preferences',
            acceptAllBtn: 'Accept all',
            acceptNecessaryBtn: 'Reject all',
            savePreferencesBtn: 'Save',
            sections: [{ title: 'Analytics', description: 'Search analytics', linkedCategory: 'analytics' }]
          }
        }
      }
    }
  })
</script></body>`,
  deniesEarly: false,
  shown: '.cm__btn[data-role="all"]',
  accept: ['.cm__btn[data-role="all"]'],
  reject: ['.cm__btn[data-role="necessary"]'],
  withdraw: ['button[data-cc="show-preferencesModal"]', '.pm__btn[data-role="necessary"]']
}

const klaro: RealBanner = {
  page: (ours) => `${GTAG_SNIPPET}
${ours}
<body><button type="button" onclick="klaro.show(); return false">Cookie settings</button>
<script>
  var klaroConfig = {
    version: 1,
    acceptAll: true,
    services: [
      {
        name: 'google-analytics',
        title: 'Google Analytics',
        purposes: ['analytics'],
        // Called with the service's consent whenever Klaro applies consent: on load, on a choice, on a change.
        callback: function (consent) {
          gtag('consent', 'update', { analytics_storage: consent ? 'granted' : 'denied' })
        }
      }
    ]
  }
</script>
<script src="/vendor/klaro/klaro.js"></script></body>`,
  deniesEarly: true,
  shown: '.cn-buttons .cm-btn-success',
  accept: ['.cn-buttons .cm-btn-success'],
  reject: ['.cn-buttons .cn-decline'],
  withdraw: ['button[onclick^="klaro.show"]', 'label[for="purpose-item-analytics"]', '.cm-modal .cm-btn-accept']
}

const tarteaucitron: RealBanner = {
  page: (ours) => `${ours}
<body>
<script src="/vendor/tarteaucitron/tarteaucitron.js"></script>
<script>
  tarteaucitron.init({ privacyUrl: '', orientation: 'middle', highPrivacy: true, AcceptAllCta: true, DenyAllCta: true, showIcon: true, googleConsentMode: true })
  ;(tarteaucitron.job = tarteaucitron.job || []).push('gcmanalyticsstorage')
</script></body>`,
  deniesEarly: true,
  shown: '#tarteaucitronPersonalize2',
  accept: ['#tarteaucitronPersonalize2'],
  reject: ['#tarteaucitronAllDenied2'],
  withdraw: ['#tarteaucitronManager', '#gcmanalyticsstorageDenied', '#tarteaucitronClosePanel']
}

export const REAL_BANNERS: [string, RealBanner][] = [
  ['vanilla-cookieconsent 3.1', cookieconsent],
  ['Klaro 0.7', klaro],
  ['tarteaucitron 1.34', tarteaucitron]
]

/**
 * Klaro's own Google Tag Manager example, as its tutorial wires it: a required service for the
 * tag manager whose onInit and onDecline push a default that denies, and whose onAccept pushes an
 * update granting for each Google service the visitor accepted. Nothing ever pushes an update
 * denying, so switching Google Analytics off in Klaro's modal withdraws nothing downstream.
 */
export const KLARO_GTM_EXAMPLE: RealBanner = {
  page: (ours) => `${ours}
<body><button type="button" onclick="klaro.show(); return false">Cookie settings</button>
<script>
  var klaroConfig = {
    version: 1,
    acceptAll: true,
    services: [
      {
        name: 'google-tag-manager',
        required: true,
        purposes: ['marketing'],
        onInit: "window.dataLayer = window.dataLayer || []; window.gtag = function () { dataLayer.push(arguments) }; gtag('consent', 'default', { ad_storage: 'denied', analytics_storage: 'denied' })",
        onAccept:
          "for (const name of Object.keys(opts.consents)) if (opts.consents[name]) dataLayer.push({ event: 'klaro-' + name + '-accepted' });" +
          " if (opts.consents[opts.vars.googleAnalyticsName || 'google-analytics']) gtag('consent', 'update', { analytics_storage: 'granted' })",
        onDecline: "window.dataLayer = window.dataLayer || []; window.gtag = function () { dataLayer.push(arguments) }; gtag('consent', 'default', { ad_storage: 'denied', analytics_storage: 'denied' })",
        vars: { googleAnalyticsName: 'google-analytics' }
      },
      { name: 'google-analytics', title: 'Google Analytics', purposes: ['analytics'], cookies: [/^_ga(_.*)?/] }
    ]
  }
</script>
<script src="/vendor/klaro/klaro.js"></script></body>`,
  deniesEarly: false,
  shown: '.cn-buttons .cm-btn-success',
  accept: ['.cn-buttons .cm-btn-success'],
  reject: ['.cn-buttons .cn-decline'],
  withdraw: ['button[onclick^="klaro.show"]', 'label[for="purpose-item-analytics"]', '.cm-modal .cm-btn-accept']
}
