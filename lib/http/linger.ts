import type { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'

/*
 * A lingering close (RFC 9112 §9.6) for a request refused while its body is
 * still arriving (a 413). Closing as soon as the answer is written leaves the
 * client's bytes unread, and the kernel then resets the connection, which can
 * throw the answer away before the client reads it: most of fifty 5 MB uploads
 * at once used to end in EPIPE instead of their 413. So the server writes the
 * answer, half-closes, and reads on, dropping what comes, until the body ends,
 * the client closes, or a bound is hit, and only then closes.
 */

/** How long a refused request may go on sending before its connection is closed anyway. */
const DRAIN_MS = 5_000

/** Connections that close once their refusal is answered. */
const closing = new WeakSet<Socket>()

/**
 * Reads and drops the rest of `req`'s body, at most `maxBytes` of it and for at
 * most DRAIN_MS; the answer, which must say `Connection: close`, is written
 * meanwhile, then the write side is closed, and the connection once the body
 * has ended (or a bound is hit). Nothing of the body is kept.
 */
export function closeOnceDrained(req: IncomingMessage, maxBytes: number): void {
  const socket = req.socket as Socket | null
  if (!socket || closing.has(socket)) return
  closing.add(socket)
  let answered = false
  let bodyEnded = false
  let drained = 0
  const cutOff = () => socket.destroy()
  const timer = setTimeout(cutOff, DRAIN_MS)
  socket.once('close', () => clearTimeout(timer))
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length
    if (drained > maxBytes) cutOff()
  })
  req.on('end', () => {
    bodyEnded = true
    if (answered) closeOnceWritten(socket)
  })
  req.on('error', () => {}) // the connection closing under the body is this function's doing
  req.resume()
  // node:http calls destroySoon once an answer that says `Connection: close` has been written to the socket.
  socket.destroySoon = () => {
    answered = true
    if (bodyEnded) closeOnceWritten(socket)
    else socket.end()
  }
}

/** Whether the connection closes once its refusal is answered: no request after that one is carried out (RFC 9112 §9.6). */
export function isClosing(socket: Socket): boolean {
  return closing.has(socket)
}

function closeOnceWritten(socket: Socket): void {
  Socket.prototype.destroySoon.call(socket)
}
