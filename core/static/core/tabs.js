// Tabs, the WAI-ARIA way, for a page whose parts carry data-tab-label (the account inquiry). The empty
// <nav data-tabs> becomes the tab list, one tab per part in page order (and the form named by data-form-id, as
// data-form-label). One part shows at a time: chosen by a click, the arrow keys, Home and End, or the address's
// #fragment (naming a part or something inside one). Without scripts every part shows, one after another.
(function () {
  "use strict";

  function setUp(list) {
    var panels = Array.prototype.slice.call(document.querySelectorAll("[data-tab-label]"));
    var form = list.dataset.formId && document.getElementById(list.dataset.formId);
    if (form) { form.dataset.tabLabel = list.dataset.formLabel || "Details"; panels.push(form); }
    if (panels.length < 2) { return; }
    list.setAttribute("role", "tablist");
    var tabs = panels.map(function (panel, i) {
      if (!panel.id) { panel.id = "tab-panel-" + i; }
      var tab = document.createElement("a");
      tab.href = "#" + panel.id;
      tab.id = panel.id + "-tab";
      tab.textContent = panel.dataset.tabLabel;
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", panel.id);
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      panel.tabIndex = 0;
      list.appendChild(tab);
      return tab;
    });

    function show(index, focus) {
      tabs.forEach(function (tab, i) {
        var on = i === index;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.tabIndex = on ? 0 : -1;
        panels[i].hidden = !on;
      });
      if (focus) { tabs[index].focus(); }
    }

    list.addEventListener("click", function (event) {
      var tab = event.target.closest('[role="tab"]');
      if (!tab) { return; }
      event.preventDefault();
      var index = tabs.indexOf(tab);
      show(index, false);
      history.replaceState(null, "", "#" + panels[index].id);
    });
    list.addEventListener("keydown", function (event) {
      var index = tabs.indexOf(document.activeElement);
      if (index < 0) { return; }
      var next = {ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1}[event.key];
      if (next === undefined) { return; }
      event.preventDefault();
      next = (next + tabs.length) % tabs.length;
      show(next, true);
      history.replaceState(null, "", "#" + panels[next].id);
    });

    function fromAddress() {
      var target = location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)));
      var found = -1;
      if (target) {
        panels.forEach(function (panel, i) { if (panel === target || panel.contains(target)) { found = i; } });
      }
      return found;
    }

    var start = Math.max(fromAddress(), 0);
    // A form sent back with its errors shows them.
    if (form && form.querySelector(".errornote, .errorlist")) { start = panels.indexOf(form); }
    list.hidden = false;
    show(start, false);
    window.addEventListener("hashchange", function () {
      var index = fromAddress();
      if (index >= 0) { show(index, false); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("nav[data-tabs]"), setUp);
  });
})();
