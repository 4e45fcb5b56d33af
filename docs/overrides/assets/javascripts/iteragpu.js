/*
 * The site's own behaviour on every page (docs/overrides/main.html loads it after Material's
 * bundle):
 *
 * - The language switcher keeps the reader's place. Each switcher link that leads to the
 *   current page's twin (`data-twin`, set by docs/overrides/partials/alternate.html) carries
 *   the page's query (the sizer's inputs) and #anchor, updated whenever they may have changed.
 *   Its clicks do not reach Material's own alternate-link handler, which would look the page up
 *   in the other language's sitemap without the query and fall back to its home page.
 * - Every region that scrolls sideways (a code block, a wide table) can be reached with the
 *   keyboard (tabindex="0"). Material does this for code blocks only on devices that hover,
 *   and removes it elsewhere; this puts it back whenever such a region overflows.
 */
(function () {
  "use strict";

  var SWITCHER_LINKS = "a[data-twin]";
  var SCROLLERS = ".md-typeset pre > code, .md-typeset__scrollwrap";

  function keepPlace() {
    var links = document.querySelectorAll(SWITCHER_LINKS);
    Array.prototype.forEach.call(links, function (link) {
      var target = new URL(link.getAttribute("data-twin"), window.location.href);
      target.search = window.location.search;
      target.hash = window.location.hash;
      link.href = target.href;
    });
  }

  function onSwitcher(event) {
    var link = event.target instanceof Element ? event.target.closest(SWITCHER_LINKS) : null;
    if (!link) return;
    keepPlace();
    // Stopped while capturing, the click never reaches Material's handler on document.body;
    // the browser still follows the link.
    if (event.type === "click") event.stopPropagation();
  }

  function overflows(element) {
    return (
      element.scrollWidth > element.clientWidth + 1 ||
      element.scrollHeight > element.clientHeight + 1
    );
  }

  function reachScrollers() {
    var regions = document.querySelectorAll(SCROLLERS);
    Array.prototype.forEach.call(regions, function (region) {
      if (region.getAttribute("tabindex") !== "0" && overflows(region)) {
        region.setAttribute("tabindex", "0");
      }
    });
  }

  var pending = false;
  function reachScrollersSoon() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      pending = false;
      reachScrollers();
    });
  }

  keepPlace();
  window.addEventListener("hashchange", keepPlace);
  window.addEventListener("popstate", keepPlace);
  // The sizer rewrites the query with history.replaceState, which fires no event: refresh the
  // links as the reader reaches for them, before the browser reads their address.
  ["pointerdown", "focusin", "contextmenu", "click"].forEach(function (type) {
    document.addEventListener(type, onSwitcher, true);
  });
  reachScrollers();
  window.addEventListener("load", reachScrollers);
  window.addEventListener("resize", reachScrollersSoon);
  // Material wraps tables and sets or removes tabindex after this script has run.
  new MutationObserver(reachScrollersSoon).observe(document.body, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ["tabindex"],
  });
})();
