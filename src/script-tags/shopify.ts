// The custom pixel's bundle: what a merchant pastes into Shopify's Customer events box, where
// no package can be imported (docs/guide/shopify.md). It defines `discoveryFeedbackShopify` within
// the pixel's code, for the line after it to call.
export { connectShopify } from '../shopify/connect'
