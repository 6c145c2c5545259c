// Plausible's page view, as its tracker package sends it: the collector is the page's own origin.
// trackLocalhost: without it the tracker sends nothing from 127.0.0.1, where the benchmark runs.
import Plausible from 'plausible-tracker'

Plausible({ domain: 'shop.example', apiHost: location.origin, trackLocalhost: true }).trackPageview()
