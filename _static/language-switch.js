/* The language switch (the header button _ext/i18n.py adds) opens the other edition's page in
 * the same tab, at the same section when that section has the same anchor there (the book's
 * explicit labels, e.g. #intro-findings, are the same in both editions). Offline, no library. */
(function () {
  "use strict";
  function setup() {
    document.querySelectorAll('a[class*="btn-language-switch"]').forEach(function (a) {
      a.removeAttribute("target");
      a.addEventListener("click", function () {
        var base = a.getAttribute("href").split("#")[0];
        a.setAttribute("href", base + (window.location.hash || ""));
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
