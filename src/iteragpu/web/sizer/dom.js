/*
 * The page's nodes brought to a description (HTML or SVG), keeping what has not changed.
 * Mirrors no Python module (browser only).
 */

import { has } from "./objects.js";

const SVG_NS = "http://www.w3.org/2000/svg";

const HTML_NS = "http://www.w3.org/1999/xhtml";

// The figures, the chart and its text alternative are redrawn on every edit. They are
// described (an element: its name, attributes and text or children) and the page's nodes
// brought to that description: a node already there of the same name is kept, only its
// changed attributes and text rewritten. Re-creating every row, mark and sentence on each
// edit made the browser match styles, shape text and lay out all of them again (issue 19).

/** An HTML element's description; `content` is its text or its children's descriptions. */
export function htmlNode(name, attributes, content) {
  return { ns: HTML_NS, name: name, attributes: attributes, content: content };
}

/** An SVG element's description. */
export function svgNode(name, attributes, content) {
  return { ns: SVG_NS, name: name, attributes: attributes, content: content || [] };
}

/** A description with a key: the node made for it is kept for the same key on the next draw. */
export function keyed(key, spec) {
  spec.key = String(key);
  return spec;
}

export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

function textOf(content) {
  return content === null || content === undefined ? "" : String(content);
}

function create(doc, spec) {
  var el = doc.createElementNS(spec.ns, spec.name);
  if (spec.key !== undefined) el.sizerKey = spec.key;
  Object.keys(spec.attributes).forEach(function (key) {
    el.setAttribute(key, String(spec.attributes[key]));
  });
  if (Array.isArray(spec.content)) {
    spec.content.forEach(function (child) {
      el.appendChild(create(doc, child));
    });
  } else {
    el.textContent = textOf(spec.content);
  }
  return el;
}

/** Bring an element's attributes and content to its description. */
function patch(doc, el, spec) {
  var attributes = spec.attributes;
  el.getAttributeNames().forEach(function (key) {
    if (!has(attributes, key)) el.removeAttribute(key);
  });
  Object.keys(attributes).forEach(function (key) {
    setAttr(el, key, String(attributes[key]));
  });
  patchContent(doc, el, spec.content);
}

/** Bring an element's content to a text (one text node, none for "") or to children. */
export function patchContent(doc, el, content) {
  if (!Array.isArray(content)) {
    var text = textOf(content);
    var only = el.firstChild;
    if (text === "" ? only === null : only !== null && only === el.lastChild &&
        only.nodeType === 3 && only.data === text) return;
    if (text !== "" && only !== null && only === el.lastChild && only.nodeType === 3) {
      only.data = text;
    } else {
      el.textContent = text;
    }
    return;
  }
  if (content.length && content.every(function (spec) {
    return spec.key !== undefined;
  })) {
    patchKeyed(doc, el, content);
    return;
  }
  var child = el.firstChild;
  content.forEach(function (spec) {
    if (child && child.nodeType === 1 && child.localName === spec.name &&
        child.namespaceURI === spec.ns) {
      patch(doc, child, spec);
      child = child.nextSibling;
    } else {
      var fresh = create(doc, spec);
      if (child) {
        el.replaceChild(fresh, child);
      } else {
        el.appendChild(fresh);
      }
      child = fresh.nextSibling;
    }
  });
  while (child) {
    var next = child.nextSibling;
    el.removeChild(child);
    child = next;
  }
}

/** Children described with keys (the chart's marks: a card's label and marks keep their
 * nodes when the cards reorder): the node of each key is kept, and only those out of order
 * moved (the longest run already in order stays), since a moved node is styled and laid out
 * again like a new one. Rows and list items are matched by place instead: a reordered row
 * rewrites its text in place, cheaper than moving it. */
function patchKeyed(doc, el, content) {
  var byKey = {};
  var old = [];
  for (var child = el.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 1 && child.sizerKey !== undefined && !has(byKey, child.sizerKey)) {
      byKey[child.sizerKey] = old.length;
    }
    old.push(child);
  }
  var used = {};
  var kept = content.map(function (spec) {
    var at = has(byKey, spec.key) ? byKey[spec.key] : -1;
    var node = at < 0 || used[at] ? null : old[at];
    if (!node || node.localName !== spec.name || node.namespaceURI !== spec.ns) return -1;
    used[at] = true;
    return at;
  });
  old.forEach(function (node, at) {
    if (!used[at]) el.removeChild(node);
  });
  var stay = inOrder(kept);
  var anchor = null;
  for (var i = content.length - 1; i >= 0; i -= 1) {
    var spec = content[i];
    var node;
    if (kept[i] >= 0) {
      node = old[kept[i]];
      patch(doc, node, spec);
      if (!stay[i]) el.insertBefore(node, anchor);
    } else {
      node = create(doc, spec);
      el.insertBefore(node, anchor);
    }
    anchor = node;
  }
}

/** Which of `positions` (old places, -1 for none) form a longest increasing run. */
function inOrder(positions) {
  var tails = [];
  var previous = [];
  positions.forEach(function (p, i) {
    previous.push(-1);
    if (p < 0) return;
    var lo = 0;
    var hi = tails.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (positions[tails[mid]] < p) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[i] = tails[lo - 1];
    tails[lo] = i;
  });
  var stay = positions.map(function () {
    return false;
  });
  for (var k = tails.length ? tails[tails.length - 1] : -1; k >= 0; k = previous[k]) {
    stay[k] = true;
  }
  return stay;
}
