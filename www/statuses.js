/**
 * What each status code means, in one plain sentence, for the status line of
 * the raw exchange. Reason phrases follow RFC 9110 §15.
 */
const statuses = {
  200: ['OK', 'It worked: the body holds what you asked for (or the result of your change).'],
  201: ['Created', 'A new resource was made; the Location header says where it lives now.'],
  204: ['No Content', 'It worked, and there is nothing to send back.'],
  206: ['Partial Content', 'Here is the part of the file your Range header asked for.'],
  301: ['Moved Permanently', 'This URL has moved for good; the Location header has the new one.'],
  302: ['Found', 'Look at the URL in the Location header instead, for now.'],
  304: ['Not Modified', 'Your copy (the ETag you sent in If-None-Match) is still current, so no body was sent.'],
  400: ['Bad Request', 'The server could not accept what you sent; the detail says what to fix.'],
  401: ['Unauthorized', 'This server wants a token: send Authorization: Bearer <token>.'],
  403: ['Forbidden', 'The server understood, but refuses to do this for you.'],
  404: ['Not Found', 'Nothing lives at this URL (yet, or any more).'],
  405: ['Method Not Allowed', 'This URL exists but does not take this method; the Allow header lists those it does.'],
  406: ['Not Acceptable', 'The server cannot answer in a format your Accept header allows.'],
  408: ['Request Timeout', 'The request took too long to arrive, so the server gave up on it.'],
  409: ['Conflict', 'This would clash with what is already stored (for example, a username that is taken).'],
  410: ['Gone', 'Something lived here once, and it is gone for good.'],
  411: ['Length Required', 'Send a Content-Length header with the body.'],
  412: ['Precondition Failed', 'Your If-Match or If-None-Match condition did not hold, so nothing changed: someone else may have changed it first.'],
  413: ['Content Too Large', 'The body is bigger than the server accepts.'],
  414: ['URI Too Long', 'The path is too long or too deep for this server.'],
  415: ['Unsupported Media Type', 'Send the body as JSON, with Content-Type: application/json.'],
  416: ['Range Not Satisfiable', 'The Range you asked for lies outside the file.'],
  422: ['Unprocessable Content', 'The body is well-formed, but its content does not make sense here.'],
  428: ['Precondition Required', 'Send If-Match with the ETag you last saw, so changes cannot overwrite each other.'],
  429: ['Too Many Requests', 'Slow down: you sent too many requests in a short time.'],
  500: ['Internal Server Error', 'Something broke on the server. It is not your request\'s fault; the server keeps serving.'],
  501: ['Not Implemented', 'The server does not support this method at all.'],
  502: ['Bad Gateway', 'A server in between got a bad answer from the next one.'],
  503: ['Service Unavailable', 'The server cannot answer right now; try again later.'],
}

const byClass = {
  1: 'Informational: the server is still working on it.',
  2: 'Success: the server did what you asked.',
  3: 'Redirection: look elsewhere for what you want.',
  4: 'Client error: something about the request needs to change.',
  5: 'Server error: the server failed to carry out a valid request.',
}

/** The reason phrase for a status code, e.g. "Created" for 201. */
export function reasonPhrase(status) {
  return statuses[status]?.[0] ?? ''
}

/** One plain-language sentence saying what the status means. */
export function explainStatus(status) {
  return statuses[status]?.[1] ?? byClass[Math.floor(status / 100)] ?? 'An unusual status code.'
}

/** "success", "redirect", "client-error" or "server-error": drives the status colour. */
export function statusKind(status) {
  if (status >= 500) return 'server-error'
  if (status >= 400) return 'client-error'
  if (status >= 300) return 'redirect'
  return 'success'
}
