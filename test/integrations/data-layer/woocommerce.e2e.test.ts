// @vitest-environment node
import { readFileSync } from 'node:fs'
import { build } from 'esbuild'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Envelope } from '../../../src/index'
import { launchEngine, type Engine, type EnginePage } from '../../support/engines'
import { startDemoCollector, startPages, STUB, whenQuiet } from '../../support/harness'

// The GA4 data-layer bridge with WooCommerce's two common GA4 plugins, their storefront
// JavaScript as published (test/integrations/data-layer/woocommerce/README.md names each file's source):
// GTM4WP 1.22.5 and Google Analytics for WooCommerce 2.1.7. What their PHP prints into the page
// is written here as the PHP builds it (each constant names the function). The add-on is tagged
// as README's snippet has it, with no data-value-includes-tax-and-shipping. What the reference
// collector (src/collector/) stored is asserted.

const FIXTURES = new URL('./woocommerce/', import.meta.url)
const GTM4WP = ['gtm4wp-ecommerce-generic.js', 'gtm4wp-woocommerce.js'].map((file) => readFileSync(new URL('gtm4wp-1.22.5/' + file, FIXTURES), 'utf8'))

/**
 * Google Analytics for WooCommerce's main.js, built from its published sources as its webpack
 * build does: WordPress packages are the page's `wp` globals (WordPress's dependency extraction).
 */
async function buildGa4w() {
  const result = await build({
    entryPoints: [new URL('ga4w-2.1.7/src/index.js', FIXTURES).pathname],
    bundle: true,
    write: false,
    format: 'iife',
    logLevel: 'silent',
    plugins: [
      {
        name: 'wordpress-globals',
        setup(plugin) {
          plugin.onResolve({ filter: /^@wordpress\// }, (args) => ({ path: args.path.slice('@wordpress/'.length), namespace: 'wp' }))
          plugin.onLoad({ filter: /.*/, namespace: 'wp' }, (args) => ({ contents: `module.exports = window.wp[${JSON.stringify(args.path)}]` }))
        }
      }
    ]
  })
  return result.outputFiles[0].text
}

// WordPress's own globals that main.js depends on: wp.i18n's __ and wp.hooks' actions, as much as it uses.
const WP_GLOBALS = `<script>window.wp = { i18n: { __: (text) => text }, hooks: { addAction() {}, removeAction() {} } }</script>`

/**
 * The few jQuery calls GTM4WP makes, and WooCommerce's variation form (add-to-cart-variation.js):
 * choosing a variation in `.variations select` triggers found_variation on the form with the
 * variation WooCommerce printed in data-product_variations.
 */
const JQUERY_AND_VARIATION_FORM = `<script>
  window.jQuery = (target) => {
    const elements = typeof target == 'string' ? Array.from(document.querySelectorAll(target)) : [target]
    return {
      on(type, handler) {
        elements.forEach((element) => element.addEventListener('jq:' + type, (event) => handler({ target: event.target, type }, ...event.detail)))
        return this
      },
      trigger(type, args = []) {
        elements.forEach((element) => {
          if (type == 'change') element.dispatchEvent(new Event('change', { bubbles: true }))
          else element.dispatchEvent(new CustomEvent('jq:' + type, { bubbles: true, detail: args }))
        })
        return this
      },
      ajaxSuccess() { return this }
    }
  }
  document.addEventListener('change', (event) => {
    const form = event.target.closest && event.target.closest('form.variations_form')
    if (!form || !event.target.value) return
    const variation = JSON.parse(form.dataset.product_variations).find((each) => each.attributes.attribute_pa_color == event.target.value)
    jQuery(form).trigger('found_variation', [variation])
  })
</script>`

// A hoodie (product 101) in red (variation 102) and blue (103), and a cap (104); 20 % tax.
const HOODIE_VARIATIONS = [
  { variation_id: 102, sku: 'HOOD-RED', display_price: 45, attributes: { attribute_pa_color: 'red' } },
  { variation_id: 103, sku: 'HOOD-BLUE', display_price: 45, attributes: { attribute_pa_color: 'blue' } }
]

// GTM4WP's globals (gtm4wp_woocommerce_add_global_vars and the plugin's data layer name), as it prints them in the head.
const GTM4WP_GLOBALS = `<script>var gtm4wp_datalayer_name = "dataLayer"; var gtm4wp_use_sku_instead = 0; var gtm4wp_currency = "EUR";
  var gtm4wp_product_per_impression = 10; var gtm4wp_clear_ecommerce = false; var gtm4wp_datalayer_max_timeout = 2000;</script>`

// gtm4wp_woocommerce_process_product() of the variable hoodie, printed by
// gtm4wp_woocommerce_single_add_to_cart_tracking() into the product form (retail vertical: `id`).
const GTM4WP_HOODIE = {
  internal_id: 101,
  item_id: 101,
  item_name: 'Hoodie',
  sku: 'HOOD',
  price: 45,
  stocklevel: null,
  stockstatus: 'instock',
  google_business_vertical: 'retail',
  item_category: 'Clothing',
  id: 101
}

// gtm4wp_woocommerce_get_purchase_datalayer() with its default options (tax and shipping not
// excluded), its items from gtm4wp_woocommerce_process_order_items(): value is the order's
// total 166.90 = lines 135.00 + tax 27.00 + shipping 4.90.
const GTM4WP_PURCHASE = {
  event: 'purchase',
  ecommerce: {
    currency: 'EUR',
    transaction_id: '5001',
    affiliation: '',
    value: 166.9,
    tax: 27,
    shipping: 4.9,
    coupon: '',
    items: [
      {
        item_id: 102,
        item_name: 'Hoodie',
        sku: 'HOOD-RED',
        price: 45,
        stocklevel: null,
        stockstatus: 'instock',
        google_business_vertical: 'retail',
        item_group_id: 101,
        item_category: 'Clothing',
        id: 102,
        item_variant: 'red',
        quantity: 2
      },
      {
        item_id: 104,
        item_name: 'Cap',
        sku: 'CAP',
        price: 45,
        stocklevel: null,
        stockstatus: 'instock',
        google_business_vertical: 'retail',
        item_category: 'Clothing',
        id: 104,
        quantity: 1
      }
    ]
  }
}

// Google Analytics for WooCommerce: get_formatted_product() of the hoodie and the cap.
const ga4wProduct = (id: number, name: string) => ({
  id,
  name,
  categories: [{ name: 'Clothing' }],
  prices: { price: 4500, currency_minor_unit: 2 },
  extensions: { woocommerce_google_analytics_integration: { identifier: String(id) } }
})
// get_formatted_cart(): each item's prices.price is its line_total.
const GA4W_CART = {
  items: [{ ...ga4wProduct(101, 'Hoodie'), variation: 'pa_color: red', quantity: 2, prices: { price: 9000, currency_minor_unit: 2 } }],
  coupons: [],
  totals: { currency_code: 'EUR', total_price: 11290, currency_minor_unit: 2 }
}
// get_formatted_order() on the thank-you page: total 166.90, tax 27.00, shipping 4.90.
const GA4W_ORDER = {
  id: 6001,
  affiliation: 'Shop',
  totals: { currency_code: 'EUR', currency_minor_unit: 2, tax_total: 2700, shipping_total: 490, total_price: 16690 },
  items: [
    { ...ga4wProduct(101, 'Hoodie'), variation: 'pa_color: red', quantity: 2, price_after_coupon_discount: 9000 },
    { ...ga4wProduct(104, 'Cap'), quantity: 1, price_after_coupon_discount: 4500 }
  ]
}
const GA4W_EVENTS = ['purchase', 'add_to_cart', 'remove_from_cart', 'view_item_list', 'select_content', 'view_item', 'begin_checkout']
// The gtag snippet register_scripts() prints in the head (the consent defaults and config left out: no gtag.js loads here).
const GA4W_HEAD = `<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}</script>`
// inline_script_data(): the page's data and settings, printed in the footer after main.js.
const ga4wData = (data: object) =>
  `<script>window.ga4w = { data: ${JSON.stringify(data)}, settings: ${JSON.stringify({ tracker_function_name: 'gtag', events: GA4W_EVENTS, identifier: 'product_id' })} }; document.dispatchEvent(new Event("ga4w:ready"));</script>`

describe('GA4 data layer with WooCommerce plugins in chromium', () => {
  let engine: Engine
  let pages: Awaited<ReturnType<typeof startPages>>
  let collector: Awaited<ReturnType<typeof startDemoCollector>>
  let ga4wMain: string
  const opened: EnginePage[] = []

  beforeAll(async () => {
    ;[engine, pages, ga4wMain] = await Promise.all([launchEngine('chromium'), startPages(), buildGa4w()])
  }, 60000)
  afterAll(async () => {
    await engine?.close()
    await pages?.close()
  }, 60000)
  beforeEach(async () => {
    collector = await startDemoCollector()
  })
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((page) => page.close().catch(() => {})))
    await collector.close()
  })

  /** A WordPress page: `head`, the tracker and the add-on as README has them, then `body` and the footer scripts. */
  const shop = (head: string, body: string) =>
    '<!doctype html><html><head>' +
    '<script>window.reported = []; const error = console.error; console.error = (...args) => { reported.push(String(args[0])); error.apply(console, args) }</script>' +
    head +
    STUB +
    `<script async src="/discovery-feedback.min.js?delay=300" data-key="KEY" data-endpoint="${collector.url}"></script>` +
    '<script src="/discovery-feedback-datalayer.min.js"></script>' +
    '</head><body>' +
    body +
    '</body></html>'
  const open = async () => {
    const page = await engine.newPage()
    opened.push(page)
    return page
  }
  const visit = async (page: EnginePage, path: string) => {
    await page.goto(pages.origin + path)
    await page.waitForFunction('window.discoveryFeedback && discoveryFeedback.tracker')
  }
  const flushed = async (page: EnginePage) => {
    await page.evaluate('discoveryFeedback.tracker.flush()')
    await whenQuiet(() => collector.posts() + collector.stored().length, 500, 15000)
  }
  const properties = (event: string) =>
    collector
      .stored()
      .filter((envelope: Envelope) => envelope.event == event)
      .map((envelope) => envelope.properties as Record<string, unknown>)

  it('GTM4WP: a chosen variation names product and variant, a second choice is no error, the order total is the revenue', async () => {
    const footer = GTM4WP.map((code) => `<script>${code}</script>`).join('')
    pages.page(
      '/product/hoodie',
      shop(
        GTM4WP_GLOBALS + JQUERY_AND_VARIATION_FORM,
        `<form class="variations_form cart" data-product_variations='${JSON.stringify(HOODIE_VARIATIONS)}'>` +
          '<table class="variations"><tr><td><select name="attribute_pa_color"><option value="">Choose</option><option value="red" selected>red</option><option value="blue">blue</option></select></td></tr></table>' +
          `<button type="button" class="single_add_to_cart_button">Add to cart</button><input type="hidden" name="gtm4wp_product_data" value='${JSON.stringify(GTM4WP_HOODIE)}' /></form>` +
          footer
      )
    )
    pages.page(
      '/checkout/order-received/5001',
      shop(GTM4WP_GLOBALS + `<script>dataLayer = window.dataLayer || []; dataLayer.push(${JSON.stringify(GTM4WP_PURCHASE)})</script>`, footer)
    )

    const page = await open()
    // The page opens with red chosen (WooCommerce's default attributes): GTM4WP pushes its view_item.
    await visit(page, '/product/hoodie')
    await page.waitForFunction(`dataLayer.some((entry) => entry.event == 'view_item')`)
    await flushed(page)
    // The shopper chooses blue: a second view_item of the same page.
    await page.evaluate(`(() => {
      const select = document.querySelector('select[name=attribute_pa_color]')
      select.value = 'blue'
      select.dispatchEvent(new Event('change', { bubbles: true }))
    })()`)
    await page.waitForFunction(`dataLayer.filter((entry) => entry.event == 'view_item').length == 2`)
    await visit(page, '/checkout/order-received/5001')
    await flushed(page)

    expect(properties('view-page').map(({ url, item_id, variant_item_id }) => [new URL(url as string).pathname, item_id, variant_item_id])).toEqual([
      ['/product/hoodie', '101', '102'],
      ['/checkout/order-received/5001', undefined, undefined]
    ])
    expect(properties('purchase')).toEqual([
      {
        order_id: '5001',
        currency: 'EUR',
        revenue: 166.9,
        total_tax: 27,
        total_shipping: 4.9,
        line_items: [
          { item_id: '101', variant_item_id: '102', unit_price: 45, quantity: 2 },
          { item_id: '104', variant_item_id: '104', unit_price: 45, quantity: 1 }
        ]
      }
    ])
    expect(await page.evaluate('reported')).toEqual([])
  })

  it('Google Analytics for WooCommerce: a listing click is a click-item, the cart page keeps the cart, the order total is the revenue', async () => {
    const footer = (data: object) => `<script>${ga4wMain}</script>` + ga4wData(data)
    const head = GA4W_HEAD + WP_GLOBALS
    pages.page(
      '/shop',
      shop(
        head,
        '<ul class="products"><li class="product type-product"><a href="#hoodie" class="woocommerce-LoopProduct-link woocommerce-loop-product__link">Hoodie</a>' +
          '<a href="/product/hoodie" data-product_id="101" class="button product_type_variable add_to_cart_button">Select options</a></li></ul>' +
          footer({ cart: { items: [], coupons: [], totals: GA4W_CART.totals }, products: [ga4wProduct(101, 'Hoodie')], events: ['view_item_list'] })
      )
    )
    pages.page('/checkout', shop(head, footer({ cart: GA4W_CART, events: ['begin_checkout'] })))
    // The cart page after a removal by its link (?remove_item): woocommerce_cart_item_removed lists remove_from_cart.
    pages.page('/cart', shop(head, footer({ cart: GA4W_CART, events: ['remove_from_cart'] })))
    // A product page after an add (woocommerce_add_to_cart): one cap.
    pages.page('/product/cap', shop(head, footer({ cart: GA4W_CART, added_to_cart: { ...ga4wProduct(104, 'Cap'), quantity: 1 }, events: ['add_to_cart'] })))
    pages.page('/checkout/order-received/6001', shop(head, footer({ cart: GA4W_CART, order: GA4W_ORDER, events: ['purchase'] })))

    const page = await open()
    await visit(page, '/shop')
    await page.click('.woocommerce-loop-product__link')
    await page.waitForFunction(`dataLayer.some((entry) => entry[1] == 'select_content')`)
    await flushed(page)
    await visit(page, '/checkout')
    await visit(page, '/cart')
    await page.waitForFunction(`dataLayer.some((entry) => entry[1] == 'remove_from_cart')`)
    await visit(page, '/product/cap')
    await page.waitForFunction(`dataLayer.some((entry) => entry[1] == 'add_to_cart')`)
    await visit(page, '/checkout/order-received/6001')
    await flushed(page)

    expect(properties('click-item')).toEqual([{ item_id: '101', variant_item_id: '101' }])
    // The cart's price is its line total: two hoodies at 90.00 each, as the plugin sends them.
    expect(properties('update-cart')).toEqual([
      { line_items: [{ item_id: '101', variant_item_id: '101', unit_price: 90, quantity: 2 }] },
      {
        line_items: [
          { item_id: '101', variant_item_id: '101', unit_price: 90, quantity: 2 },
          { item_id: '104', variant_item_id: '104', unit_price: 45, quantity: 1 }
        ]
      }
    ])
    expect(properties('purchase')).toEqual([
      {
        order_id: '6001',
        currency: 'EUR',
        revenue: 166.9,
        total_tax: 27,
        total_shipping: 4.9,
        affiliation: 'Shop',
        line_items: [
          { item_id: '101', variant_item_id: '101', unit_price: 45, quantity: 2 },
          { item_id: '104', variant_item_id: '104', unit_price: 45, quantity: 1 }
        ]
      }
    ])
    expect(await page.evaluate('reported')).toEqual([])
  })
})
