// The admin account page (templates/admin/billing/account/change_form.html).
// A statement takes a few seconds to lay out: say so on the link until the PDF opens.
document.addEventListener("click", function (event) {
  var link = event.target.closest("a[data-busy]");
  if (!link || link.getAttribute("aria-busy") === "true") { return; }
  link.dataset.label = link.textContent;
  link.textContent = link.dataset.busy;
  link.setAttribute("aria-busy", "true");
  link.setAttribute("role", "status");
  setTimeout(function () { link.textContent = link.dataset.label; link.removeAttribute("aria-busy"); }, 20000);
});
