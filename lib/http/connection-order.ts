import type { Socket } from 'node:net'
import { isClosing } from './linger.ts'

/**
 * Requests pipelined on one connection, in the order they were sent
 * (RFC 9112 §9.3.2): node parses every request that arrives and hands each
 * to the handler at once, so without this a DELETE sent right after a PUT
 * could run first. A write waits for every earlier request of its
 * connection and a read waits for every earlier write; reads in a row run
 * side by side, as a server may with safe methods.
 *
 * A turn ends when its handler has answered, or has handed the request on
 * (an event stream once open, the next middleware). Answers on a connection
 * go out in order anyway: those after an event stream never leave, as before.
 *
 * Once a request of the connection has been refused with a close (a 413, see
 * linger.ts), no later one runs, whether it waits here or arrives after: the
 * server that says `close` processes no further request (RFC 9112 §9.6).
 */
interface Lane {
  /** Requests running now. */
  running: number
  /** Whether those are all reads. */
  reading: boolean
  /** Requests waiting for their turn, in the order they arrived. */
  waiting: Turn[]
  /** Ends a running request's turn; made once per connection, so a request allocates nothing here. */
  end: () => void
}

interface Turn {
  safe: boolean
  run: () => Promise<void>
}

const lanes = new WeakMap<Socket, Lane>()

/**
 * Runs `run` once every earlier request of the connection it needs to wait
 * for has ended. The usual case, a single request in flight, runs at once.
 */
export function inConnectionOrder(socket: Socket | null | undefined, safe: boolean, run: () => Promise<void>): void {
  if (!socket) return void run() // a request made up by an embedding app has no connection to keep in order
  if (isClosing(socket)) return
  const lane = lanes.get(socket) ?? newLane(socket)
  if (lane.running === 0 || (safe && lane.reading && lane.waiting.length === 0)) start(lane, safe, run)
  else lane.waiting.push({ safe, run })
}

function newLane(socket: Socket): Lane {
  const lane: Lane = {
    running: 0,
    reading: true,
    waiting: [],
    end() {
      lane.running--
      if (isClosing(socket)) lane.waiting.length = 0
      while (lane.waiting.length > 0 && (lane.running === 0 || (lane.reading && lane.waiting[0].safe))) {
        const turn = lane.waiting.shift()!
        start(lane, turn.safe, turn.run)
      }
    },
  }
  lanes.set(socket, lane)
  return lane
}

function start(lane: Lane, safe: boolean, run: () => Promise<void>): void {
  lane.reading = lane.running === 0 ? safe : lane.reading && safe
  lane.running++
  run().then(lane.end, lane.end)
}
