/**
 * The one UTF-8 encoder of a page, made as the module loads: no encoder is made per event, and a
 * page that later removes or replaces `TextEncoder` cannot take it from the tracker.
 */
export const utf8 = new TextEncoder()
