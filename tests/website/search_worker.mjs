// Material's own search worker, run in node against a built language site, for
// tests/website/test_search_worker.py. Reads a JSON request on stdin:
//   {"site": "<site>/<lang>", "queries": [...], "forms": [...]}
// and writes {"results": {query: [[{location, title, text}, ...], ...]}, "forms": {word: [...]},
// "browserStems": {word: stem}} (the last for Indonesian: sastrawijs alone, without the build's map).
import fs from "node:fs"
import path from "node:path"
import vm from "node:vm"

const request = JSON.parse(fs.readFileSync(0, "utf8"))
const workers = path.join(request.site, "assets/javascripts/workers")
const script = fs.readdirSync(workers).find(name => /^search\..*\.min\.js$/.test(name))

// The worker's globals: it loads its language files with importScripts, relative to itself.
let onMessage
let reply
const context = {
  console,
  postMessage: message => reply(message),
  addEventListener: (type, listener) => { if (type === "message") onMessage = listener },
  importScripts: (...urls) => {
    for (const url of urls)
      vm.runInContext(fs.readFileSync(path.join(workers, url), "utf8"), context, { filename: url })
  }
}
context.self = context
vm.createContext(context)
vm.runInContext(fs.readFileSync(path.join(workers, script), "utf8"), context, { filename: script })
const send = data => new Promise(resolve => { reply = resolve; onMessage({ data }) })

// Material's message types: 0 = setup, 2 = query (its SearchMessageType).
const index = JSON.parse(fs.readFileSync(path.join(request.site, "search/search_index.json"), "utf8"))
await send({ type: 0, data: { ...index, options: { suggest: false } } })
const results = {}
for (const query of request.queries || []) {
  const { data } = await send({ type: 2, data: query })
  results[query] = data.items.map(group => group.map(({ location, title, text }) => ({ location, title, text })))
}
const { forms: formsOf, browserStem } = context.lunr.iteragpuSearch
const forms = {}
const browserStems = {}
for (const word of request.forms || []) {
  forms[word] = formsOf(word)
  if (browserStem) browserStems[word] = browserStem(word)
}
process.stdout.write(JSON.stringify({ results, forms, browserStems }))
