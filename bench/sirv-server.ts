/**
 * sirv 3 (what polka and json-server 1.0 serve files with) on a bare
 * `node:http` server, serving the bench's www folder: what restdir's static
 * files are compared with. Run as a child process: the folder is its one
 * argument, and it sends `{ port }` once listening.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import sirv from 'sirv'

const serve = sirv(process.argv[2], { etag: true })
const server = http.createServer((req, res) =>
  serve(req, res, () => {
    res.writeHead(404).end()
  }),
)
process.on('disconnect', () => process.exit(0))
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }))
