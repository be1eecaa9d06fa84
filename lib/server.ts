import http from 'node:http'
import { createHandler, type RestdirHandler } from './handler.ts'
import type { RestdirOptions } from './options.ts'
import { answerClientErrors } from './http/client-errors.ts'
import { continueWhenBodyRead } from './http/body.ts'
import type { ResetSummary } from './data/reset.ts'

export interface RestdirServer extends http.Server {
  /** Resolves once the store is open. */
  ready: Promise<void>
  handler: RestdirHandler
  /**
   * Stops accepting connections, ends event streams, lets in-flight requests
   * finish, then closes the store (releasing its lock).
   */
  shutdown(): Promise<void>
  /** Puts the store back to the fixture (see RestdirHandler.reset). */
  reset(): Promise<ResetSummary>
}

/** A `node:http` server wired to restdir's handler (docs/library.md, "A server of its own"). */
export function createServer(options: RestdirOptions = {}): RestdirServer {
  const handler = createHandler(options)
  const { headers, request } = handler.settings.timeouts
  // Slow clients (slow-loris) are cut off with a 408: headers must arrive within `headers` ms,
  // the whole request, body included, within `request` ms. Node looks for late ones only every
  // connectionsCheckingInterval ms (30 s by default): here at least every second, sooner for short limits.
  const server = http.createServer(
    {
      headersTimeout: headers,
      requestTimeout: request,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, headers / 4)),
      // The guards answer a missing Host themselves, as problem+json (node's own 400 has no body).
      requireHostHeader: false,
    },
    handler,
  ) as RestdirServer
  // The DNS-rebinding guard needs the address really bound, whatever `listen` was given.
  server.on('listening', () => {
    const address = server.address()
    handler.settings.guards.host = typeof address === 'object' && address ? address.address : (address ?? undefined)
  })
  answerClientErrors(server)
  // Node would send `100 Continue` before the handler sees the request; it is sent once the body is read instead.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    continueWhenBodyRead(req, res)
    server.emit('request', req, res)
  })
  server.ready = handler.ready
  server.handler = handler
  server.reset = () => handler.reset()
  handler.ready.catch((error) => server.emit('error', error))
  server.shutdown = () =>
    new Promise<void>((resolve, reject) => {
      // Keep-alive connections become idle as their last request ends; close each as soon as it does.
      const closeIdle = setInterval(() => server.closeIdleConnections(), 50)
      server.close(() => {
        clearInterval(closeIdle)
        handler.close().then(resolve, reject)
      })
      handler.endStreams()
      server.closeIdleConnections()
    })
  return server
}
