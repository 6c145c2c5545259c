import { pageCommand } from '../browser/command'
import { shopifyCartIds } from '../integrations/shopify-cart'

/*
 * The Shopify cart writer's script tag (dist/discovery-feedback-shopify-cart.min.js), pasted
 * into the theme next to the tracker's tag (docs/guide/order-webhooks.md). It plugs in through
 * the page's command function (`discoveryFeedback('use', addon)`), so it may load before or after
 * the tracker, and reads the shopper's ids from the tracker the tag created: its hooks are only
 * called once that tracker exists. Options are its own data-* attributes:
 *   data-root="/fr/"   where the AJAX Cart API lives (default: the theme's Shopify.routes.root, else '/')
 */

type Page = Window & { discoveryFeedbackShopifyCart?: boolean; discoveryFeedback?: unknown }
;(() => {
  const page: Page = window
  // Loaded twice, it would check the cart twice.
  if (page.discoveryFeedbackShopifyCart) return
  page.discoveryFeedbackShopifyCart = true
  const command = pageCommand(page)
  const root = document.currentScript?.dataset.root
  shopifyCartIds(
    {
      get user() {
        return command().tracker!.user
      },
      use(addon) {
        command()('use', addon)
        return () => {}
      }
    },
    root ? { root } : {}
  )
})()
