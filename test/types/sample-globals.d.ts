// What the code samples of README.md and docs/ take from the page around them: the values a shop
// has at hand where the sample would run. test/package/types.test.ts compiles the samples with
// these in scope.
declare const rid: string, suggestion: string, item_id: string, variant_item_id: string, quantity: number
declare const order_id: string, currency: string, revenue: number, email: string, uid: string
declare const line_items: import('discovery-feedback').LineItem[]
declare const key: string, endpoint: string
declare const tracker: import('discovery-feedback').Tracker
declare const createTracker: typeof import('discovery-feedback').createTracker
declare const discovery: import('discovery-feedback/client').DiscoveryClient & { readonly tracker: import('discovery-feedback/client').LinkedTracker }
declare const createRecommendations: typeof import('discovery-feedback/client').createRecommendations
declare const savedChoice: 'granted' | 'denied' | undefined
declare const consentManager: { on(event: 'change', listener: (analytics: boolean) => void): void }
declare const order: import('discovery-feedback').EventProperties['purchase'] & { cookies: { df_uid: string; df_sid: string }; ip: string; userAgent: string }
declare const request: { headers: { cookie?: string } }
declare const response: { setHeader(name: string, value: string): void }

// What the recipes' build tools provide: Vite's import.meta.env, Next.js's process.env, .vue files.
interface ImportMeta {
  readonly env: { readonly VITE_FEEDBACK_KEY: string; readonly VITE_FEEDBACK_ENDPOINT: string }
}
declare const process: {
  env: {
    NEXT_PUBLIC_FEEDBACK_KEY: string
    NEXT_PUBLIC_FEEDBACK_ENDPOINT: string
    REDIS_URL: string
    DF_SERVER_SECRET: string
    SHOPIFY_WEBHOOK_SECRET: string
    WOOCOMMERCE_WEBHOOK_SECRET: string
  }
}
declare module '*.vue' {
  const component: import('vue').Component
  export default component
}

// What Shopify gives a custom pixel's code: the Standard API, and the bundle pasted above the call.
declare const api: import('@shopify/web-pixels-extension').ExtensionApi
declare const discoveryFeedbackShopify: typeof import('discovery-feedback/shopify')

// What Google's snippet and the open-source banners' script tags give a page (docs/guide/consent-banners.md, "Recipes for open-source banners").
declare function gtag(...args: unknown[]): void
declare const CookieConsent: { acceptedService(service: string, category: string): boolean; run(config: object): Promise<void> }
declare const tarteaucitron: { init(config: object): void; job?: string[] }
