/**
 * The request form: reads and checks what the user typed, and fills itself
 * from a lesson or a tree click. Sending is the caller's job (`onSubmit`).
 */

const methodsWithBody = new Set(['POST', 'PUT', 'PATCH'])
/** How long after the last key the body is checked. */
const TYPING_PAUSE_MS = 150

export function createRequestForm(form, { onSubmit }) {
  const method = form.elements.method
  const path = form.elements.path
  const body = form.elements.body
  const headers = form.elements.headers
  const headersBox = form.querySelector('#headers-box')
  const bodyMessage = form.querySelector('#body-message')
  const headersMessage = form.querySelector('#headers-message')
  const sendButton = form.querySelector('#send')
  let busy = false

  function syncMethod() {
    form.dataset.method = method.value
    const takesBody = methodsWithBody.has(method.value)
    body.disabled = !takesBody
    if (takesBody) checkBody()
    else showMessage(bodyMessage, 'info', `${method.value} requests carry no body; what you typed stays here for later.`)
  }

  /** Checks the body; returns { ok, text }. */
  function checkBody() {
    const text = body.value.trim()
    if (text === '') {
      showMessage(bodyMessage, 'info', 'No body: the server treats it as {}.')
      body.removeAttribute('aria-invalid')
      return { ok: true, text: '' }
    }
    try {
      const value = JSON.parse(text)
      body.removeAttribute('aria-invalid')
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        showMessage(bodyMessage, 'warning', 'Valid JSON, but not an object ({ … }): the server will answer 400 Bad Request.')
      } else {
        showMessage(bodyMessage, 'ok', 'Valid JSON.')
      }
      return { ok: true, text: body.value }
    } catch (error) {
      body.setAttribute('aria-invalid', 'true')
      showMessage(bodyMessage, 'error', describeJsonError(body.value, error))
      return { ok: false }
    }
  }

  /** Parses "Name: value" lines; returns { ok, headers: [[name, value]] }. */
  function checkHeaders() {
    const pairs = []
    const lines = headers.value.split('\n')
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index].trim()
      if (line === '') continue
      const colon = line.indexOf(':')
      const name = colon > 0 ? line.slice(0, colon).trim() : ''
      const value = colon > 0 ? line.slice(colon + 1).trim() : ''
      try {
        if (!name) throw new Error('no name')
        new Headers([[name, value]])
      } catch {
        headers.setAttribute('aria-invalid', 'true')
        showMessage(headersMessage, 'error', `Line ${index + 1}: write each header as Name: value, for example If-Match: "abc".`)
        return { ok: false }
      }
      pairs.push([name, value])
    }
    headers.removeAttribute('aria-invalid')
    showMessage(headersMessage, 'info', 'One per line, e.g. If-Match: "etag".')
    return { ok: true, headers: pairs }
  }

  function read() {
    const relativePath = normalizePath(path.value)
    path.value = relativePath
    const takesBody = methodsWithBody.has(method.value)
    const bodyCheck = takesBody ? checkBody() : { ok: true, text: '' }
    if (!bodyCheck.ok) {
      body.focus()
      return undefined
    }
    const headerCheck = checkHeaders()
    if (!headerCheck.ok) {
      headersBox.open = true
      headers.focus()
      return undefined
    }
    return { method: method.value, path: relativePath, body: bodyCheck.text || undefined, headers: headerCheck.headers }
  }

  // Checked a moment after the last key (README.md, "The playground"): soon enough to point at a slip
  // while it is fresh, late enough not to flash a mistake at every key of a word.
  let typingTimer
  body.addEventListener('input', () => {
    clearTimeout(typingTimer)
    typingTimer = setTimeout(checkBody, TYPING_PAUSE_MS)
  })
  body.addEventListener('blur', () => {
    clearTimeout(typingTimer)
    if (!body.disabled) checkBody()
  })
  headers.addEventListener('change', checkHeaders)
  method.addEventListener('change', syncMethod)
  form.querySelector('#format-body').addEventListener('click', () => {
    try {
      body.value = JSON.stringify(JSON.parse(body.value), null, 2)
    } catch {
      // Left as typed: the check below says where the mistake is.
    }
    checkBody()
  })
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (busy) return
    const request = read()
    if (request) onSubmit(request)
  })
  // Ctrl+Enter (Cmd+Enter on a Mac) sends from anywhere on the page.
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.defaultPrevented) {
      event.preventDefault()
      form.requestSubmit()
    }
  })
  syncMethod()

  return {
    /** Puts a request in the form: { method, path, body?, headers? } (body as a value or text). */
    fill(request) {
      method.value = request.method
      path.value = request.path
      if (request.body !== undefined) {
        body.value = typeof request.body === 'string' ? request.body : JSON.stringify(request.body, null, 2)
      } else if (methodsWithBody.has(request.method)) {
        body.value = ''
      }
      headers.value = request.headers ?? ''
      if (request.headers) headersBox.open = true
      body.removeAttribute('aria-invalid')
      syncMethod()
      checkHeaders()
      form.classList.remove('filled')
      void form.offsetWidth // restart the highlight animation
      form.classList.add('filled')
    },
    submit() {
      form.requestSubmit()
    },
    setBusy(value) {
      busy = value
      sendButton.setAttribute('aria-disabled', String(value))
      form.classList.toggle('busy', value)
    },
  }
}

function normalizePath(value) {
  const trimmed = value.trim()
  if (trimmed === '') return '/'
  return trimmed.startsWith('/') ? trimmed : '/' + trimmed
}

function showMessage(element, kind, text) {
  element.dataset.kind = kind
  element.textContent = text
}

/** Turns a JSON.parse error into "Line 2, column 5: …" plus a hint for the usual slips. */
export function describeJsonError(text, error) {
  const message = String(error.message).replace(/\s*\(line \d+ column \d+\)/, '')
  let where = ''
  const lineColumn = /line (\d+) column (\d+)/.exec(error.message)
  const position = /position (\d+)/.exec(error.message)
  if (lineColumn) {
    where = `Line ${lineColumn[1]}, column ${lineColumn[2]}: `
  } else if (position) {
    const before = text.slice(0, Number(position[1])).split('\n')
    where = `Line ${before.length}, column ${before.at(-1).length + 1}: `
  }
  const reason = message.replace(/ in JSON at position \d+/, '').replace(/^JSON\.parse: /, '')
  return `${where}${reason}.${jsonHint(text)}`.replace(/\.\./g, '.')
}

function jsonHint(text) {
  if (/'[^'\n]*'\s*:/.test(text) || /:\s*'/.test(text)) return ' JSON needs "double quotes", not \'single\' ones.'
  if (/[{,]\s*[A-Za-z_$][\w$]*\s*:/.test(text)) return ' In JSON every key needs double quotes: {"name": "Ada"}.'
  if (/,\s*[}\]]/.test(text)) return ' JSON allows no comma after the last item.'
  return ''
}
