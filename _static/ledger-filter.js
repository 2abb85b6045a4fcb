/* The claims ledger's filter (book/ledger.md): show only the rows of one chapter, verdict,
 * method or decider. Offline, no library. The page carries a hidden
 * <form class="ledger-filter"> with four <select data-filter=...> menus and one
 * <span data-claim data-chapter data-verdict data-method data-by> per claim (written by
 * normlib.ledger.filter_controls_html); the rows are the folded admonitions
 * div.ledger-row, matched by the claim ID their title starts with. Without JavaScript the
 * form stays hidden and every row shows. */
(function () {
  "use strict";

  var FIELDS = ["chapter", "verdict", "method", "by"];

  /* True when a row's values match every chosen filter ("" means any). */
  function rowMatches(values, filters) {
    for (var i = 0; i < FIELDS.length; i++) {
      var f = FIELDS[i];
      if (filters[f] && values[f] !== filters[f]) {
        return false;
      }
    }
    return true;
  }

  /* The claim ID a ledger row is about: the start of its title, e.g. "C3.6". */
  function rowClaim(row) {
    var title = row.querySelector(".admonition-title");
    if (!title) {
      return "";
    }
    var m = /^\s*(C\d+\.\d+)\b/.exec(title.textContent || "");
    return m ? m[1] : "";
  }

  function setup() {
    var form = document.querySelector("form.ledger-filter");
    var store = document.querySelector("div.ledger-filter-rows");
    var found = document.querySelectorAll("div.ledger-row");
    if (!form || !store || !found.length) {
      return;
    }
    var data = {};
    store.querySelectorAll("span[data-claim]").forEach(function (s) {
      var values = {};
      FIELDS.forEach(function (f) { values[f] = s.getAttribute("data-" + f); });
      data[s.getAttribute("data-claim")] = values;
    });
    var rows = [];
    found.forEach(function (row) {
      var values = data[rowClaim(row)];
      if (values) {
        FIELDS.forEach(function (f) { row.setAttribute("data-" + f, values[f]); });
        rows.push([row, values]);
      }
    });
    var count = form.querySelector("output.ledger-filter-count");
    function apply() {
      var filters = {};
      form.querySelectorAll("select[data-filter]").forEach(function (sel) {
        filters[sel.getAttribute("data-filter")] = sel.value;
      });
      var shown = 0;
      rows.forEach(function (r) {
        var ok = rowMatches(r[1], filters);
        r[0].hidden = !ok;
        if (ok) { shown += 1; }
      });
      if (count) {
        /* the form's data-count template ("{shown} of {total} claims"), translated per edition */
        var template = form.getAttribute("data-count") || "{shown} of {total}";
        count.textContent = template.replace("{shown}", shown).replace("{total}", rows.length);
      }
    }
    form.addEventListener("change", apply);
    form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    form.hidden = false;
    apply();
  }

  if (typeof module !== "undefined" && module.exports) {
    module.exports = { rowMatches: rowMatches, rowClaim: rowClaim, FIELDS: FIELDS };
  }
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", setup);
    } else {
      setup();
    }
  }
})();
