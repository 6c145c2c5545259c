// Plausible's page view, as its tracker package sends it: the collector is the page's own origin.
import Plausible from 'plausible-tracker'

Plausible({ domain: 'shop.example', apiHost: location.origin }).trackPageview()
