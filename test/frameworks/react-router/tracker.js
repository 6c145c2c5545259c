// README's recipe: the tracker is made once, when the app's code loads, never in a component.
import { createTracker } from 'discovery-feedback'

export const tracker = createTracker({ key: 'KEY', endpoint: import.meta.env.VITE_FEEDBACK_ENDPOINT })
