/* The claims ledger's filter (book/ledger.md): show only the rows of one chapter, status
 * or source verdict. Offline, no library. The page carries, next to the table, a hidden
 * <form class="ledger-filter"> with three <select data-filter=...> menus and one
 * <span data-claim data-chapter data-status data-verdict> per claim (written by
 * normlib.ledger.filter_controls_html); rows are matched by the claim ID in their first
 * cell. Without JavaScript the form stays hidden and the whole table shows. */
(function () {
  "use strict";

  var FIELDS = ["chapter", "status", "verdict"];

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

  /* The claim ID a table row is about: the first cell's text, e.g. "C3.6". */
  function rowClaim(tr) {
    var cell = tr.querySelector("td");
    if (!cell) {
      return "";
    }
    var m = /C\d+\.\d+/.exec(cell.textContent || "");
    return m ? m[0] : "";
  }

  function setup() {
    var form = document.querySelector("form.ledger-filter");
    var store = document.querySelector("div.ledger-filter-rows");
    var table = document.querySelector("div.ledger-table table");
    if (!form || !store || !table) {
      return;
    }
    var data = {};
    store.querySelectorAll("span[data-claim]").forEach(function (s) {
      data[s.getAttribute("data-claim")] = {
        chapter: s.getAttribute("data-chapter"),
        status: s.getAttribute("data-status"),
        verdict: s.getAttribute("data-verdict")
      };
    });
    var rows = [];
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      var values = data[rowClaim(tr)];
      if (values) {
        FIELDS.forEach(function (f) { tr.setAttribute("data-" + f, values[f]); });
        rows.push([tr, values]);
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
        count.textContent = shown + " of " + rows.length + " claims";
      }
    }
    form.addEventListener("change", apply);
    form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    form.hidden = false;
    apply();
  }

  if (typeof module !== "undefined" && module.exports) {
    module.exports = { rowMatches: rowMatches, FIELDS: FIELDS };
  }
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", setup);
    } else {
      setup();
    }
  }
})();
