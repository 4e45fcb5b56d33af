/* The site search's language support, inside Material's search worker.
 *
 * Material's worker loads this file as lunr/min/lunr.<lang>.min.js before it builds the index;
 * iteragpu.docs_tools.site_search wrote `lunr.iteragpuSearch` (the language's data) and, for
 * Indonesian, Sastrawi's stemmer (sastrawijs) just above. Two things change:
 *
 * - Indexing: each token Material's tokenizer cut (between spaces) is also indexed under its
 *   pieces (`max_memory_reserved` of `torch.cuda.max_memory_reserved()`) and under each piece's
 *   analysis: Korean content morphemes (측정 for 측정을) or the Indonesian stem (ukur for
 *   pengukuran). Every added term keeps the token's position, so highlights mark the original
 *   word.
 * - Querying: Material appends `*` to every word it sends, and lunr skips its search pipeline for
 *   such terms; so `lunr.Index.prototype.search` is replaced: each word keeps Material's prefix
 *   clause and gains exact clauses for its pieces, their analysis, and the glossary terms of which
 *   it is a synonym.
 * - Both: a count written with a suffix or a number word (`70B`, `Llama-3-70B`, 70억, 7 miliar)
 *   is also indexed and looked for as one written form (`7b` for 70억 and 7 miliar), and a number
 *   format's short name meets its long one (`bf16` is `bfloat16`, `fp16` is `float16`).
 */
(function (lunr) {
  "use strict"
  const data = lunr.iteragpuSearch
  const PIECE = /[\p{L}\p{M}\p{N}_]+(?:[.,][0-9]+)*/gu
  const HANGUL = /[\uac00-\ud7a3]/
  const KOREAN_WORD = /^[\uac00-\ud7a3]+$/
  // A synonym's clauses weigh less than the words the reader typed.
  const SYNONYM_BOOST = 0.5
  const PIECE_BOOST = 0.2

  const analyze = data.analyzer === "morphemes" ? koreanAnalyzer(data) : indonesianAnalyzer(data)

  // Korean: the build's morphemes of every eojeol of the site; an eojeol the site never uses is
  // cut after the longest known word that a particle or ending the build saw follows
  // (가중치를 -> 가중치).
  function koreanAnalyzer({ morphemes, suffixes, stems }) {
    const known = new Set([...Object.keys(morphemes), ...stems])
    const endings = new Set(suffixes)
    return piece => {
      const found = morphemes[piece]
      if (found) return found
      if (!HANGUL.test(piece)) return []
      for (let cut = piece.length - 1; cut > 0; cut--) {
        const head = piece.slice(0, cut)
        if (endings.has(piece.slice(cut)) && known.has(head))
          return [head, ...morphemes[head] || []]
      }
      return []
    }
  }

  // Indonesian: Sastrawi's stem of a word made of letters (not of identifiers or numbers): the
  // build's, for every word of the site; sastrawijs's for a word the site never uses.
  function indonesianAnalyzer({ stems }) {
    const stemmer = new self.sastrawijs.Stemmer()
    lunr.iteragpuSearch.browserStem = word => stemmer.stem(word)
    // The build's map holds every word of the site ("" where the stem is the word itself).
    const found = new Map(Object.entries(stems))
    return piece => {
      if (!/^[a-z]+$/.test(piece)) return []
      if (!found.has(piece)) found.set(piece, stemmer.stem(piece))
      const stem = found.get(piece)
      return stem && stem !== piece ? [stem] : []
    }
  }

  // Counts and number formats, as the build's data names them for the language: the CLI's
  // count suffixes (k, m, b, t, with their exponents of ten), the language's number words
  // (억, miliar) and decimal sign, the short names of number formats (bf for bfloat).
  const COUNT_SUFFIXES = new Map(Object.entries(data.counts.suffixes))
  const NUMBER_WORDS = new Map(Object.entries(data.counts.words))
  const DECIMAL = data.counts.decimal
  const FORMAT_NAMES = Object.entries(data.formats)
  const SUFFIX_OF = new Map([...COUNT_SUFFIXES].map(([suffix, exponent]) => [exponent, suffix]))
  const EXPONENTS = [...SUFFIX_OF.keys()].sort((a, b) => b - a)
  const WRITTEN_COUNT = /^([0-9]+(?:[.,][0-9]+)?)(\p{L}+)$/u
  const FORMAT = /^(\p{L}+)([0-9]+)$/u
  const MARKS = /^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu

  // A count as the CLI's suffixes write it (`7b` for 7 × 10^9, `1.5b`, `70m`, `700k`), from
  // digits with at most one decimal point and an exponent of ten; null below the smallest suffix.
  function countTerm(digits, exponent) {
    const [whole, fraction = ""] = digits.split(".")
    let n = BigInt(whole + fraction)
    let e = exponent - fraction.length
    if (n === 0n) return null
    while (n % 10n === 0n) { n /= 10n; e++ }
    const text = n.toString()
    const unit = EXPONENTS.find(u => text.length - 1 + e >= u)
    if (unit === undefined) return null
    const shift = e - unit
    const mantissa = shift >= 0 ? text + "0".repeat(shift)
      : `${text.slice(0, text.length + shift)}.${text.slice(text.length + shift)}`
    return mantissa + SUFFIX_OF.get(unit)
  }

  // A figure of the language's prose (Indonesian `1,5` and `1.000`, Korean `1.5` and `1,000`)
  // before a number word, as digits with a decimal point; null when it reads as no number.
  function spelledCount(figure, word) {
    if (!NUMBER_WORDS.has(word)) return null
    const [whole, fraction, ...rest] = figure.replace(MARKS, "").split(DECIMAL)
    if (rest.length || !/^[0-9]{1,3}(?:[.,][0-9]{3})*$|^[0-9]+$/.test(whole)) return null
    if (fraction !== undefined && !/^[0-9]+$/.test(fraction)) return null
    const digits = whole.replace(/[.,]/g, "") + (fraction === undefined ? "" : `.${fraction}`)
    return countTerm(digits, NUMBER_WORDS.get(word))
  }

  // The other written forms of one piece: a count with its suffix or number word (`70b`,
  // `1.5b`, `70억` are `70b`, `1.5b`, `7b`), a number format's name (`bf16` and `bfloat16`).
  function notations(piece) {
    const count = WRITTEN_COUNT.exec(piece)
    if (count) {
      const [, figure, unit] = count
      if (COUNT_SUFFIXES.has(unit)) return [countTerm(figure.replace(",", "."), COUNT_SUFFIXES.get(unit))]
      return [spelledCount(figure, unit)]
    }
    const format = FORMAT.exec(piece)
    if (format) {
      const [, name, bits] = format
      for (const [short, long] of FORMAT_NAMES) {
        if (name === short) return [long + bits]
        if (name === long) return [short + bits]
      }
    }
    return []
  }

  // Every term a token is found by: itself, itself without the marks around it
  // (`--need-gib`, `(측정)`), its pieces, their analysis, the other written forms of each.
  function forms(token) {
    const bare = token.replace(MARKS, "")
    const found = [token, bare, ...notations(bare)]
    for (const piece of token.match(PIECE) || []) {
      const analysed = [piece, ...analyze(piece)]
      found.push(...analysed, ...analysed.flatMap(notations))
    }
    return [...new Set(found)].filter(form => form)
  }

  // The written form of the count that a figure makes with the word after it (`7` `miliar`,
  // `70` `억`): indexed under the figure, and looked for when a reader types both.
  function nextWordCount(figure, next) {
    return next === undefined ? null : spelledCount(figure, next.replace(MARKS, ""))
  }

  // A piece's form for comparing it with a synonym's: its analysis where it has one.
  function canonical(piece) {
    return analyze(piece).join("+") || piece
  }

  // Each synonym as the canonical forms of its pieces (`warm-up` is `warm`, `up`, as Material
  // cuts a typed `warm-up`), with the words of the term the pages use.
  const synonyms = data.synonyms.map(([synonym, term]) => ({
    keys: (synonym.match(PIECE) || []).map(canonical),
    term: term.split(/\s+/)
  }))

  // Tokens repeat (a page says `memori` hundreds of times): each is analysed once.
  const formsOf = new Map()
  function expand(token, at, tokens) {
    const text = token.toString()
    if (!formsOf.has(text)) formsOf.set(text, forms(text))
    const found = formsOf.get(text)
    const count = nextWordCount(text, tokens && tokens[at + 1] && tokens[at + 1].toString())
    return (count && !found.includes(count) ? [...found, count] : found)
      .map(form => token.clone(() => form))
  }
  lunr.Pipeline.registerFunction(expand, "iteragpu-" + data.code)

  lunr[data.code] = function () {
    this.pipeline.reset()
    this.pipeline.add(expand)
    this.searchPipeline.reset()
  }

  // Code the reader typed: an option (`--kv-heads`) or an identifier (`torch.cuda`, `kv_heads`).
  const CODE = /^[-+]|[_.]/

  // The glossary terms whose synonym the query's words, code aside, contain.
  function synonymTerms(words) {
    const keys = words.filter(word => !CODE.test(word))
      .flatMap(word => (word.match(PIECE) || []).map(canonical))
    const terms = []
    for (const { keys: synonym, term } of synonyms)
      for (let at = 0; at + synonym.length <= keys.length; at++)
        if (synonym.every((key, offset) => key === keys[at + offset])) {
          terms.push(...term)
          break
        }
    return [...new Set(terms)]
  }

  // lunr's query syntax, read as a reader means it: a hyphen inside a word belongs to the word
  // (`warm-up`, `--need-gib`, found whole as the index holds it, and by its parts), and a run
  // of operators before a word is a command's option, not "must not contain".
  const parse = lunr.QueryParser.prototype.parse
  lunr.QueryParser.prototype.parse = function () {
    const readable = this.lexer.str.split(/(\s+)/).map(word => {
      const presence = /^[-+](?![-+])/.test(word) ? word[0] : ""
      return presence + word.slice(presence.length).replace(/[-+]/g, "\\$&")
    })
    this.lexer = new lunr.QueryLexer(readable.join(""))
    return parse.call(this)
  }

  // A figure the reader typed (13.04 in `13.04 GiB`) is what they look for: the pages must
  // contain it; the unit beside it is on every page.
  const FIGURE = /^[0-9]+(?:[.,][0-9]+)*$/

  lunr.Index.prototype.search = function (queryString) {
    const parsed = new lunr.Query(this.fields)
    new lunr.QueryParser(queryString, parsed).parse()
    // First strictly: a typed figure must be found, and a compound (`--kv-heads`, `warm-up`)
    // only whole; when nothing is found so, loosely: every word and piece counts on its own.
    const strict = search(this, parsed.clauses, true)
    return strict.length ? strict : search(this, parsed.clauses, false)
  }

  function search(index, clauses, strict) {
    const typed = new Map()  // each word the reader typed -> the terms added for it
    const { OPTIONAL, REQUIRED, PROHIBITED } = lunr.Query.presence
    const words = clauses.map(clause => clause.term.replace(/^\*|\*$/g, ""))
    const results = index.query(query => {
      for (const [at, clause] of clauses.entries()) {
        const word = words[at]
        let presence = clause.presence
        if (strict && presence === OPTIONAL && FIGURE.test(word)) presence = REQUIRED
        if (!strict && presence === REQUIRED) presence = OPTIONAL
        // A Korean word is looked for as typed, not as Material's prefix: every eojeol of the
        // pages is indexed under its morphemes too, so the prefix adds no page, but it counted a
        // title twice (피크가 and its morpheme 피크) against a title that is the word alone.
        const exact = KOREAN_WORD.test(word) && clause.term.endsWith("*")
        const term = exact ? word : clause.term
        const wildcard = exact ? lunr.Query.wildcard.NONE : clause.wildcard
        query.clause({ ...clause, term, wildcard, presence, usePipeline: false })
        if (presence === PROHIBITED) continue
        const added = forms(word).filter(form => form !== word)
        const count = nextWordCount(word, words[at + 1])
        if (count && !added.includes(count)) added.push(count)
        const pieces = new Set(word.match(PIECE) || [])
        for (const form of added) {
          // The pieces of a compound (`kv` of `--kv-heads`) say less than the compound.
          const piece = pieces.size > 1 && pieces.has(form)
          if (piece && strict) continue
          const boost = clause.boost * (piece ? PIECE_BOOST : 1)
          query.term(form, { fields: clause.fields, boost, usePipeline: false })
        }
        typed.set(word, new Set(added))
      }
      const typedWords = [...typed.keys()]
      for (const term of synonymTerms(typedWords))
        for (const form of forms(term)) {
          query.term(form, { boost: SYNONYM_BOOST, usePipeline: false })
          for (const word of typedWords) typed.get(word).add(form)
        }
    })
    for (const { matchData } of results) {
      // A word and the terms added for it share its position: Material must mark it once.
      const marked = new Set()
      for (const fields of Object.values(matchData.metadata))
        for (const [field, { position }] of Object.entries(fields))
          fields[field].position = position.filter(at => {
            const fresh = !marked.has(`${field}:${at}`)
            marked.add(`${field}:${at}`)
            return fresh
          })
      // Material marks a typed word that no index term begins with as missing; a word found
      // through its analysis or a synonym is not missing.
      for (const [word, added] of typed)
        if (!Object.keys(matchData.metadata).some(term => term.startsWith(word)) &&
            Object.keys(matchData.metadata).some(term => added.has(term)))
          matchData.metadata[word] = {}
    }
    return results
  }

  // For the node tests, which run this file outside the worker.
  lunr.iteragpuSearch.forms = forms
  lunr.iteragpuSearch.synonymTerms = synonymTerms
})(self.lunr)
