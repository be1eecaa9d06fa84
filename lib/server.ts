import http from 'node:http'
import { createHandler, type RestdirHandler } from './handler.ts'
import type { RestdirOptions } from './options.ts'
import { answerClientErrors } from './client-errors.ts'

export interface RestdirServer extends http.Server {
  /** Resolves once the store is open. */
  ready: Promise<void>
  handler: RestdirHandler
  /**
   * Stops accepting connections, ends event streams, lets in-flight requests
   * finish, then closes the store (releasing its lock).
   */
  shutdown(): Promise<void>
}

/** A `node:http` server wired to restdir's handler (SPEC §14). */
export function createServer(options: RestdirOptions = {}): RestdirServer {
  const handler = createHandler(options)
  const server = http.createServer(handler) as RestdirServer
  answerClientErrors(server)
  server.ready = handler.ready
  server.handler = handler
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
