// Snowplow's page view, as its browser tracker's documentation starts: the collector is the page's own origin.
import { newTracker, trackPageView } from '@snowplow/browser-tracker'

newTracker('sp', location.origin, { appId: 'shop', plugins: [] })
trackPageView()
