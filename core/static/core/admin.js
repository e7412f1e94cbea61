// The admin's pages at WCAG 2.1 AA (loaded on every admin page by templates/admin/base_site.html).
//
// Django's autocomplete fields (select2) name their combobox only by the value chosen, so an empty one has no
// name (4.1.2): each gets its field's label, from <label for> or, in a table's row, the select's aria-label.
(function () {
  "use strict";
  function nameComboboxes() {
    document.querySelectorAll(".select2-selection__rendered[id^='select2-']").forEach(function (shown) {
      var box = shown.closest(".select2-selection");
      if (!box || box.hasAttribute("aria-label")) return;
      var id = shown.id.replace(/^select2-/, "").replace(/-container$/, "");
      var select = document.getElementById(id);
      var label = document.querySelector("label[for='" + id + "']");
      var name = (select && select.getAttribute("aria-label")) || (label && label.textContent.replace(/:\s*$/, "").trim());
      if (!name) return;
      box.setAttribute("aria-label", name);
      shown.setAttribute("aria-label", name);
    });
  }
  new MutationObserver(nameComboboxes).observe(document.documentElement, {childList: true, subtree: true});
  document.addEventListener("DOMContentLoaded", nameComboboxes);
})();

// Buttons that would otherwise need inline handlers, which the Content-Security-Policy forbids: a [data-print]
// button prints the page; a submit button with [data-confirm] asks before its form is sent.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var target = event.target.closest("[data-print], [data-confirm]");
    if (!target) return;
    if (target.hasAttribute("data-print")) {
      window.print();
    } else if (!window.confirm(target.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });
})();
