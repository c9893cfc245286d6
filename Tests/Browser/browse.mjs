// Drives Debian's headless Chromium through a list of steps and prints, for each, one JSON
// line: what the page's DOM holds and every request the browser made (its status, whether it
// was conditional, whether Chromium's own cache answered it, the Cache-Status it got).
//
//   node Tests/Browser/browse.mjs --base http://127.0.0.1:PORT --steps '[...]' [--chromium PATH] [--timeout 90]
//
// Steps (a JSON list, run in order):
//   {"do": "load", "path": "/index.html"}   navigate and wait for the load event
//   {"do": "reload"}                          reload (as the reload button) and wait for the load event
//   {"do": "write", "file": "/abs/path", "text": "..."}   write a file (change the site between loads)
//   {"do": "purge", "path": "/app.js"}        send PURGE path to BASE; the line holds the status
// After each load or reload, `dom` holds the text of #out and the size of the image #logo.
//
// Chromium runs with the DevTools protocol on a pipe (descriptors 3 and 4, no port), a profile
// of its own in a temporary folder, and every host name but 127.0.0.1 unresolvable, so it reaches
// nothing but the server under test. Chromium runs in a process group of its own, stopped whole
// at the end. The whole run is bounded by --timeout seconds; on any failure it prints why on
// standard error, stops Chromium and exits 1.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'

const options = { chromium: 'chromium', timeout: 90 }
for (let i = 2; i < process.argv.length; i += 2) options[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!options.base || !options.steps) {
  console.error('usage: browse.mjs --base URL --steps JSON [--chromium PATH] [--timeout SECONDS]')
  process.exit(64)
}
const steps = JSON.parse(options.steps)
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'monarch-browser-'))
const browser = spawn(options.chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe', `--user-data-dir=${profile}`,
  '--no-first-run', '--no-default-browser-check', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--disable-default-apps', '--disable-extensions', '--no-pings', '--disable-domain-reliability',
  '--disable-breakpad', '--disable-client-side-phishing-detection', '--metrics-recording-only',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', 'about:blank'
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true })
// Chromium's own lines, less the D-Bus complaints of a machine without a session bus.
let browserLog = ''
browser.stderr.on('data', chunk => {
  const lines = String(chunk).split('\n').filter(line => line && !line.includes('dbus'))
  browserLog = (browserLog + lines.map(line => line + '\n').join('')).slice(-4000)
})
const gone = new Promise(resolve => browser.on('exit', resolve))

// Stops Chromium with every process of its group (detached: a group of its own), waits for it,
// removes its profile and exits with `code`; the first call decides (Chromium's exit, which the
// first one causes, calls it again).
let finishing = false
async function finish (code, message) {
  if (finishing) return
  finishing = true
  if (message) console.error(`browse.mjs: ${message}\n--- chromium's last words:\n${browserLog}`)
  try { process.kill(-browser.pid, 'SIGKILL') } catch {}
  await Promise.race([gone, new Promise(resolve => setTimeout(resolve, 5000))])
  try { fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }) } catch {}
  process.exit(code)
}
const deadline = setTimeout(() => finish(1, `not done after ${options.timeout} s`), options.timeout * 1000)
deadline.unref()
browser.on('exit', (code, signal) => finish(1, `chromium exited (${code ?? signal}) before the steps were done`))
browser.on('error', error => finish(1, `cannot start ${options.chromium}: ${error.message}`))

// The DevTools protocol on the pipe: JSON messages, each ended by a NUL byte.
const toBrowser = browser.stdio[3]
const fromBrowser = browser.stdio[4]
let nextId = 1
const pending = new Map()
const listeners = new Set()
let buffered = ''
fromBrowser.on('data', chunk => {
  buffered += chunk.toString('utf8')
  let end
  while ((end = buffered.indexOf('\0')) >= 0) {
    const message = JSON.parse(buffered.slice(0, end))
    buffered = buffered.slice(end + 1)
    if (message.id !== undefined && pending.has(message.id)) {
      const { resolve, reject, method } = pending.get(message.id)
      pending.delete(message.id)
      if (message.error) reject(new Error(`${method}: ${message.error.message}`))
      else resolve(message.result)
    } else {
      for (const listener of listeners) listener(message)
    }
  }
})
function send (method, params = {}, sessionId) {
  const id = nextId++
  toBrowser.write(JSON.stringify({ id, method, params, sessionId }) + '\0')
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }))
}
function event (method, sessionId, seconds = 30) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { listeners.delete(listener); reject(new Error(`no ${method} within ${seconds} s`)) }, seconds * 1000)
    const listener = message => {
      if (message.method === method && message.sessionId === sessionId) {
        clearTimeout(timer)
        listeners.delete(listener)
        resolve(message.params)
      }
    }
    listeners.add(listener)
  })
}

// Requests of the current step, by request id.
let requests = new Map()
function track (message) {
  const params = message.params
  if (!params) return
  const entry = () => {
    if (!requests.has(params.requestId)) requests.set(params.requestId, { url: '', sent: {} })
    return requests.get(params.requestId)
  }
  switch (message.method) {
    case 'Network.requestWillBeSent': entry().url = params.request.url; Object.assign(entry().sent, params.request.headers); break
    case 'Network.requestWillBeSentExtraInfo': Object.assign(entry().sent, params.headers); break
    case 'Network.requestServedFromCache': entry().fromBrowserCache = true; break
    case 'Network.responseReceived': {
      const request = entry()
      request.status = params.response.status
      request.fromBrowserCache ||= params.response.fromDiskCache || params.response.fromMemoryCache || false
      const headers = Object.fromEntries(Object.entries(params.response.headers).map(([k, v]) => [k.toLowerCase(), v]))
      request.cacheStatus = headers['cache-status'] ?? null
      break
    }
    case 'Network.loadingFailed': entry().failed = params.errorText; break
  }
}
listeners.add(track)

function report (request) {
  const sent = Object.fromEntries(Object.entries(request.sent).map(([k, v]) => [k.toLowerCase(), v]))
  return {
    path: request.url.startsWith(options.base) ? request.url.slice(options.base.length) : request.url,
    status: request.status ?? null,
    conditional: 'if-none-match' in sent || 'if-modified-since' in sent,
    fromBrowserCache: request.fromBrowserCache ?? false,
    cacheStatus: request.cacheStatus ?? null,
    failed: request.failed ?? null
  }
}

async function dom (sessionId) {
  const expression = `JSON.stringify({
    out: document.getElementById('out')?.textContent ?? null,
    image: (() => { const i = document.getElementById('logo'); return i ? { complete: i.complete, width: i.naturalWidth, height: i.naturalHeight } : null })()
  })`
  const result = await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)
  return JSON.parse(result.result.value)
}

function purge (target) {
  const url = new URL(target, options.base)
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'PURGE', timeout: 10000 }, response => {
      let body = ''
      response.on('data', chunk => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode, body }))
    })
    request.on('timeout', () => request.destroy(new Error('PURGE: no answer within 10 s')))
    request.on('error', reject)
    request.end()
  })
}

try {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' })
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true })
  await send('Page.enable', {}, sessionId)
  await send('Network.enable', {}, sessionId)
  for (const step of steps) {
    requests = new Map()
    const line = { step: step.do }
    if (step.do === 'load' || step.do === 'reload') {
      const loaded = event('Page.loadEventFired', sessionId)
      if (step.do === 'load') await send('Page.navigate', { url: new URL(step.path, options.base).href }, sessionId)
      else await send('Page.reload', {}, sessionId)
      await loaded
      line.dom = await dom(sessionId)
      line.requests = [...requests.values()].filter(r => r.url.startsWith('http')).map(report)
    } else if (step.do === 'write') {
      fs.writeFileSync(step.file, step.text)
    } else if (step.do === 'purge') {
      Object.assign(line, await purge(step.path))
    } else {
      throw new Error(`unknown step ${JSON.stringify(step)}`)
    }
    console.log(JSON.stringify(line))
  }
  await finish(0)
} catch (error) {
  await finish(1, error.stack ?? String(error))
}
