// @vitest-environment node
// The WooCommerce PHP snippet of docs/guide/order-webhooks.md, as the guide shows it: checked by
// `php -l` (Debian's php-cli, which .ci/run installs), then run against stand-ins of the two
// checkout hooks and of an order, with the tracker's cookies, a forged cookie and none.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const PHP = '/usr/bin/php'
const guide = readFileSync(new URL('../../docs/guide/order-webhooks.md', import.meta.url), 'utf8')
const blocks = [...guide.matchAll(/```php\n([\s\S]*?)```/g)].map((match) => match[1])
const folder = mkdtempSync(join(tmpdir(), 'df-snippet-'))
const snippet = join(folder, 'snippet.php')
writeFileSync(snippet, blocks[0] ?? '')

// WordPress's add_action and wp_unslash, and an order that records its meta and its saves; then each hook is run as WooCommerce runs it.
const HARNESS = `<?php
$hooks = array();
function add_action( $name, $callback ) { global $hooks; $hooks[ $name ] = $callback; }
function wp_unslash( $value ) { return is_string( $value ) ? stripslashes( $value ) : $value; }
class Stand_In_Order {
	public $meta = array();
	public $saves = 0;
	public function update_meta_data( $key, $value ) { $this->meta[ $key ] = $value; }
	public function save() { $this->saves++; }
}
$_COOKIE = json_decode( $argv[1], true );
require ${JSON.stringify(snippet)};
$result = array();
foreach ( array( 'woocommerce_checkout_create_order', 'woocommerce_store_api_checkout_update_order_meta' ) as $hook ) {
	$order = new Stand_In_Order();
	$hooks[ $hook ]( $order );
	$result[ $hook ] = array( 'meta' => $order->meta, 'saves' => $order->saves );
}
echo json_encode( $result );
`
const harness = join(folder, 'harness.php')
writeFileSync(harness, HARNESS)
const run = (cookies: Record<string, string>) => JSON.parse(execFileSync(PHP, [harness, JSON.stringify(cookies)], { encoding: 'utf8' }))

describe("the guide's WooCommerce snippet", () => {
  it('is one block of PHP without syntax errors (php -l)', () => {
    expect(blocks).toHaveLength(1)
    expect(execFileSync(PHP, ['-l', snippet], { encoding: 'utf8' })).toContain('No syntax errors detected')
  })

  it("saves the tracker's uid and sid into the order's meta data at either checkout, and the block checkout's order is saved", () => {
    const ids = { df_uid: 'V1StGXR8_Z5jdHi6B-myT', df_sid: 'k3j5h2g7f8d9s0a1q2w3e' }
    expect(run(ids)).toEqual({
      woocommerce_checkout_create_order: { meta: { _df_uid: ids.df_uid, _df_sid: ids.df_sid }, saves: 0 },
      woocommerce_store_api_checkout_update_order_meta: { meta: { _df_uid: ids.df_uid, _df_sid: ids.df_sid }, saves: 1 }
    })
  })

  it('saves nothing that is not an id the tracker makes, and nothing without the cookies', () => {
    expect(run({ df_uid: '<script>alert(1)</script>', df_sid: 'x'.repeat(33) })).toEqual({
      woocommerce_checkout_create_order: { meta: [], saves: 0 },
      woocommerce_store_api_checkout_update_order_meta: { meta: [], saves: 0 }
    })
    expect(run({})).toEqual({
      woocommerce_checkout_create_order: { meta: [], saves: 0 },
      woocommerce_store_api_checkout_update_order_meta: { meta: [], saves: 0 }
    })
  })
})
