export const NAMESPACE = 'woocommerce-google-analytics'
export const ACTION_PREFIX = 'experimental__woocommerce_blocks'
