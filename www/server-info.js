/**
 * What the page header says about the server: a link to the API description
 * (OpenAPI 3.1, at the API root's reserved `?_openapi`), and a read-only
 * notice when the API root's `Allow` offers no write (`restdir --readonly`).
 */
import { apiUrl, discoverApiBase } from './api.js'

const base = await discoverApiBase()
const root = apiUrl(base, '/')
document.getElementById('api-description').href = root + '?_openapi'

try {
  const response = await fetch(root, { method: 'OPTIONS', cache: 'no-store' })
  const allow = (response.headers.get('Allow') ?? '').split(',').map((method) => method.trim())
  const readOnly = response.status === 204 && !allow.includes('POST')
  document.getElementById('read-only').hidden = !readOnly
  document.documentElement.dataset.readonly = String(readOnly)
} catch {
  // Offline: the tree says so; the header keeps its default.
}
