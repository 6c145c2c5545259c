'use strict'
function _typeof(e) {
  return (_typeof =
    'function' == typeof Symbol && 'symbol' == typeof Symbol.iterator
      ? function (e) {
          return typeof e
        }
      : function (e) {
          return e && 'function' == typeof Symbol && e.constructor === Symbol && e !== Symbol.prototype ? 'symbol' : typeof e
        })(e)
}
var gtm4wp_last_selected_product_variation
function gtm4wp_woocommerce_console_log(e) {
  var t
  'undefined' != typeof console &&
    console.log &&
    ('object' === _typeof(e) && (e = JSON.stringify(e)),
    (e = (t = new Date()).getHours() + ':' + t.getMinutes() + ':' + t.getSeconds() + '.' + t.getMilliseconds() + ' - ' + e),
    console.log('[GTM4WP debug]: ' + e))
}
function gtm4wp_woocommerce_handle_cart_qty_change() {
  document.querySelectorAll('.product-quantity input.qty').forEach(function (e) {
    var t = e.defaultValue,
      o = parseInt(e.value)
    if (t != (o = isNaN(o) ? t : o)) {
      var e = e.closest('.cart_item'),
        e = e && e.querySelector('.remove')
      if (e)
        return (
          !(e = gtm4wp_read_json_from_node(e, 'gtm4wp_product_data')) ||
          void (t < o
            ? ((e.quantity = o - t), (e.price = e.price), gtm4wp_push_ecommerce('add_to_cart', [e], { currency: gtm4wp_currency, value: e.price * e.quantity }))
            : ((e.quantity = t - o),
              (e.price = e.price),
              gtm4wp_push_ecommerce('remove_from_cart', [e], { currency: gtm4wp_currency, value: e.price * e.quantity })))
        )
    }
  })
}
function gtm4wp_woocommerce_handle_payment_method_change() {
  var e, t
  ;-1 < gtm4wp_checkout_step_fired.indexOf('payment_method') ||
    ('complete' == document.readyState &&
      ((e = '(payment type not found)'),
      (t = (t = document.querySelector('.payment_methods input:checked')) || document.querySelector('input[name^=payment_method]')) && (e = t.value),
      gtm4wp_push_ecommerce('add_payment_info', window.gtm4wp_checkout_products, {
        currency: gtm4wp_currency,
        payment_type: e,
        value: window.gtm4wp_checkout_value
      }),
      gtm4wp_checkout_step_fired.push('payment_method')))
}
function gtm4wp_woocommerce_handle_shipping_method_change() {
  var e, t
  ;-1 < gtm4wp_checkout_step_fired.indexOf('shipping_method') ||
    ('complete' == document.readyState &&
      ((e = '(shipping tier not found)'),
      (t = (t = document.querySelector('input[name^=shipping_method]:checked')) || document.querySelector('input[name^=shipping_method]')) && (e = t.value),
      gtm4wp_push_ecommerce('add_shipping_info', window.gtm4wp_checkout_products, {
        currency: gtm4wp_currency,
        shipping_tier: e,
        value: window.gtm4wp_checkout_value
      }),
      gtm4wp_checkout_step_fired.push('shipping_method')))
}
function gtm4wp_woocommerce_process_pages() {
  var n = {
    'wp-block-handpicked-products': { displayname: 'Handpicked Products', counter: 1 },
    'wp-block-product-best-sellers': { displayname: 'Best Selling Products', counter: 1 },
    'wp-block-product-category': { displayname: 'Product Category List', counter: 1 },
    'wp-block-product-new': { displayname: 'New Products', counter: 1 },
    'wp-block-product-on-sale': { displayname: 'Sale Products', counter: 1 },
    'wp-block-products-by-attribute': { displayname: 'Products By Attribute', counter: 1 },
    'wp-block-product-tag': { displayname: 'Products By Tag', counter: 1 },
    'wp-block-product-top-rated': { displayname: 'Top Rated Products', counter: 1 }
  }
  if (
    (document.querySelectorAll('.wc-block-grid .wc-block-grid__product').forEach(function (e) {
      var t = e.closest('.wc-block-grid'),
        o = e.querySelector('.gtm4wp_productdata')
      if (t && o) {
        var r = t.classList
        if (r)
          for (var c in n)
            r.contains(c) &&
              (gtm4wp_update_json_in_node(o, 'gtm4wp_product_data', 'item_list_name', n[c].displayname),
              gtm4wp_update_json_in_node(o, 'gtm4wp_product_data', 'index', n[c].counter),
              n[c].counter++)
      }
    }),
    0 < document.querySelectorAll('.gtm4wp_productdata,.widget-product-item').length)
  ) {
    var e,
      t = []
    if (
      (document.querySelectorAll('.gtm4wp_productdata,.widget-product-item').forEach(function (e) {
        e = gtm4wp_read_json_from_node(e, 'gtm4wp_product_data')
        if (!e) return !0
        t.push(e)
      }),
      0 < gtm4wp_product_per_impression)
    )
      for (; t.length;) ((e = t.splice(0, gtm4wp_product_per_impression)), gtm4wp_push_ecommerce('view_item_list', e, { currency: gtm4wp_currency }))
    else gtm4wp_push_ecommerce('view_item_list', t, { currency: gtm4wp_currency })
  }
  ;(document.addEventListener(
    'click',
    function (e) {
      var t = e.target
      if (!t) return !0
      if (
        t.closest('.add_to_cart_button:not(.product_type_variable, .product_type_grouped, .product_type_bundle_input_required, .single_add_to_cart_button)')
      ) {
        var o = t.closest('.product,.wc-block-grid__product'),
          o = o && o.querySelector('.gtm4wp_productdata')
        if (!o) return !0
        o = gtm4wp_read_json_from_node(o, 'gtm4wp_product_data')
        if (!o) return !0
        if ('variable' === o.product_type || 'grouped' === o.product_type) return !0
        ;(o.productlink && delete o.productlink,
          delete o.product_type,
          (o.quantity = 1),
          gtm4wp_push_ecommerce('add_to_cart', [o], { currency: gtm4wp_currency, value: o.price }))
      }
      o = t.closest('.single_add_to_cart_button')
      if (o) {
        if (o.classList.contains('disabled') || o.disabled) return !0
        o = t.closest('form.cart')
        if (!o) return !0
        var r = o.querySelectorAll('[name=variation_id]'),
          c = o.classList && o.classList.contains('grouped_form')
        if (0 < r.length)
          gtm4wp_last_selected_product_variation &&
            ((r = o.querySelector('[name=quantity]')),
            (gtm4wp_last_selected_product_variation.quantity = (r && r.value) || 1),
            gtm4wp_push_ecommerce('add_to_cart', [gtm4wp_last_selected_product_variation], {
              currency: gtm4wp_currency,
              value: (gtm4wp_last_selected_product_variation.price * gtm4wp_last_selected_product_variation.quantity).toFixed(2)
            }))
        else if (c) {
          var r = document.querySelectorAll('.grouped_form .gtm4wp_productdata'),
            n = [],
            a = 0
          if (
            (r.forEach(function (e) {
              var t,
                o,
                e = gtm4wp_read_json_from_node(e, 'gtm4wp_product_data', ['productlink'])
              return (
                !(
                  e &&
                  (t = 0) < (o = document.querySelectorAll('input[name=quantity\\[' + e.internal_id + '\\]]')).length &&
                  0 != (t = (o[0] && o[0].value) || 1)
                ) || ((e.quantity = t), delete e.internal_id, n.push(e), void (a += e.price * e.quantity))
              )
            }),
            0 == n.length)
          )
            return !0
          gtm4wp_push_ecommerce('add_to_cart', n, { currency: gtm4wp_currency, value: a.toFixed(2) })
        } else {
          c = o.querySelector('[name=gtm4wp_product_data]')
          if (!c) return !0
          r = gtm4wp_read_from_json(c.value)
          ;((r.quantity = o.querySelector('[name=quantity]') && o.querySelector('[name=quantity]').value),
            isNaN(r.quantity) && (r.quantity = 1),
            gtm4wp_push_ecommerce('add_to_cart', [r], { currency: gtm4wp_currency, value: r.price * r.quantity }))
        }
      }
      if (t.closest('.mini_cart_item a.remove,.product-remove a.remove')) {
        c = t && t.closest('.mini_cart_item a.remove,.product-remove a.remove')
        if (!c) return !0
        o = gtm4wp_read_json_from_node(c, 'gtm4wp_product_data')
        if (!o) return !0
        var r = 0,
          _ = c.closest('.cart_item'),
          _ = _ && _.querySelectorAll('.product-quantity input.qty')
        if (
          (_ && 0 !== _.length
            ? (r = _[0].value)
            : (_ = (c = c.closest('.mini_cart_item')) && c.querySelectorAll('.quantity')) &&
              0 < _.length &&
              ((r = parseInt(_[0].textContent)), Number.isNaN(r)) &&
              (r = 0),
          0 === r)
        )
          return !0
        ;((o.quantity = r), gtm4wp_push_ecommerce('remove_from_cart', [o], { currency: gtm4wp_currency, value: o.price * o.quantity }))
      }
      c = t.closest(
        '.products li:not(.product-category) a:not(.add_to_cart_button):not(.quick-view-button),.wc-block-grid__products li:not(.product-category) a:not(.add_to_cart_button):not(.quick-view-button),.products>div:not(.product-category) a:not(.add_to_cart_button):not(.quick-view-button),.widget-product-item,.woocommerce-grouped-product-list-item__label a'
      )
      if (c) {
        if ('undefined' == typeof google_tag_manager) return !0
        var i,
          _ = e.target,
          r = _.closest('.product,.wc-block-grid__product'),
          o = (r = (r = r || (r = _.closest('.products li')) || _.closest('.products>div')) || _.closest('.woocommerce-grouped-product-list-item__label'))
            ? r.querySelector('.gtm4wp_productdata')
            : _,
          t = gtm4wp_read_json_from_node(o, 'gtm4wp_product_data', ['internal_id'])
        if (!t) return !0
        if (t.productlink != c.getAttribute('href')) return !0
        for (i in window.google_tag_manager)
          if ('gtm-' == i.substring(0, 4).toLowerCase()) {
            window.gtm4wp_first_container_id = i
            break
          }
        if ('' === window.gtm4wp_first_container_id) return !0
        var u,
          d,
          p,
          m,
          r = 2e3
        0 < (r = void 0 !== window.gtm4wp_datalayer_max_timeout ? window.gtm4wp_datalayer_max_timeout : r)
          ? ((u = e.ctrlKey || e.metaKey),
            (d = '_blank' === c.target),
            (p = e.defaultPrevented) || e.preventDefault(),
            (u || d) && (window.productpage_window = window.open('about:blank', '_blank')),
            (m = t.productlink),
            delete t.productlink,
            gtm4wp_push_ecommerce(
              'select_item',
              [t],
              { currency: gtm4wp_currency },
              function (e) {
                if (void 0 !== e && window.gtm4wp_first_container_id != e) return !0
                p || ((d || u) && productpage_window ? (productpage_window.location.href = m) : (document.location.href = m))
              },
              r
            ))
          : (delete t.productlink, gtm4wp_push_ecommerce('select_item', [t], { currency: gtm4wp_currency }))
      }
    },
    { capture: !0 }
  ),
    jQuery(document).on('found_variation', function (e, t) {
      if (void 0 !== t && ('interactive' !== document.readyState || !gtm4wp_view_item_fired_during_pageload)) {
        e = e.target
        if (!e) return !0
        var o,
          e = e.querySelector('[name=gtm4wp_product_data]')
        if (!e) return !0
        try {
          o = JSON.parse(e.value)
        } catch (e) {
          return (console && console.error && console.error(e.message), !0)
        }
        ;((o.price = gtm4wp_make_sure_is_float(o.price)),
          (o.item_group_id = o.id),
          (o.id = t.variation_id),
          (o.item_id = t.variation_id),
          (o.sku = t.sku),
          gtm4wp_use_sku_instead && t.sku && '' !== t.sku && ((o.id = t.sku), (o.item_id = t.sku)),
          (o.price = gtm4wp_make_sure_is_float(t.display_price)))
        var r,
          c = []
        for (r in t.attributes) c.push(t.attributes[r])
        ;((o.item_variant = c.join(',')),
          delete (gtm4wp_last_selected_product_variation = o).internal_id,
          gtm4wp_push_ecommerce('view_item', [o], { currency: gtm4wp_currency, value: o.price }),
          'interactive' === document.readyState && (gtm4wp_view_item_fired_during_pageload = !0))
      }
    }),
    jQuery('.variations select').trigger('change'),
    jQuery(document).ajaxSuccess(function (e, t, o) {
      void 0 !== o &&
        -1 < o.url.indexOf('wc-api=WC_Quick_View') &&
        setTimeout(function () {
          var e = document.querySelector('#gtm4wp_quickview_data')
          if (e && e.dataset && e.dataset.gtm4wp_datalayer)
            try {
              var t = JSON.parse(e.dataset.gtm4wp_datalayer)
              t && window.dataLayer && window.dataLayer.push(t)
            } catch (e) {
              console && console.error && console.error(e.message)
            }
        }, 500)
    }))
  var o = !1,
    r = !1,
    c = document.querySelector('body')
  ;(c && ((o = c.classList && c.classList.contains('woocommerce-cart')), (r = c.classList && c.classList.contains('woocommerce-checkout'))),
    o &&
      (document.addEventListener('click', function (e) {
        e = e.target
        return !e || !e.closest('[name=update_cart]') || void gtm4wp_woocommerce_handle_cart_qty_change()
      }),
      document.addEventListener('keypress', function (e) {
        e = e.target
        return !e || !e.closest('.woocommerce-cart-form input[type=number]') || void gtm4wp_woocommerce_handle_cart_qty_change()
      })),
    r &&
      ((window.gtm4wp_checkout_value = window.gtm4wp_checkout_value || 0),
      (window.gtm4wp_checkout_products = window.gtm4wp_checkout_products || []),
      (window.gtm4wp_checkout_products_ga4 = window.gtm4wp_checkout_products_ga4 || []),
      document.addEventListener('change', function (e) {
        e = e.target
        return !e || !e.closest('input[name^=shipping_method]') || void gtm4wp_woocommerce_handle_shipping_method_change()
      }),
      document.addEventListener('change', function (e) {
        e = e.target
        return !e || !e.closest('input[name=payment_method]') || void gtm4wp_woocommerce_handle_payment_method_change()
      }),
      jQuery('form.checkout').on('checkout_place_order', function () {
        ;(-1 == gtm4wp_checkout_step_fired.indexOf('shipping_method') && gtm4wp_woocommerce_handle_shipping_method_change(),
          -1 == gtm4wp_checkout_step_fired.indexOf('payment_method') && gtm4wp_woocommerce_handle_payment_method_change())
      })))
}
function gtm4wp_woocommerce_page_loading_completed() {
  ;(document.removeEventListener('DOMContentLoaded', gtm4wp_woocommerce_page_loading_completed),
    window.removeEventListener('load', gtm4wp_woocommerce_page_loading_completed),
    gtm4wp_woocommerce_process_pages())
}
;((window.gtm4wp_view_item_fired_during_pageload = !1),
  (window.gtm4wp_checkout_step_fired = []),
  (window.gtm4wp_first_container_id = ''),
  'loading' !== document.readyState
    ? window.setTimeout(gtm4wp_woocommerce_process_pages)
    : (document.addEventListener('DOMContentLoaded', gtm4wp_woocommerce_page_loading_completed),
      window.addEventListener('load', gtm4wp_woocommerce_page_loading_completed)))
