/**
 * The one UTF-8 encoder of a page, made as the module loads: no encoder is made per event, and a
 * page that later removes or replaces the global `TextEncoder` cannot take it from the tracker
 * (one that replaces `TextEncoder.prototype.encode` still reaches it, as it reaches every page's
 * encoders).
 */
export const utf8 = new TextEncoder()
