/**
 * The User-Agent of the server sender (`discovery-feedback/server`): what a relay tells it from a
 * page by, so that a server sender without the relay's secret is told so rather than judged a
 * bot (Node's own agent is one, to isbot) and dropped.
 */
const NAME = 'discovery-feedback-server/'
export const SERVER_AGENT = NAME + '1'

/** Whether a request's User-Agent is the server sender's, of any version. */
export const isServerAgent = (ua: string | null | undefined) => !!ua && ua.startsWith(NAME)
