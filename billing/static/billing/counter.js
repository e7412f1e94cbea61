// The counter page (templates/admin/billing/payment/counter.html): the account typed, looked up as it is typed.
(function () {
  const input = document.getElementById("id_account_no");
  const box = document.getElementById("counter-account");
  const url = box && box.dataset.lookup;
  let timer = null;
  function show(data) {
    box.textContent = "";
    const p = document.createElement("p");
    p.textContent = data.found
      ? data.name + ", " + data.service_address + ": due now $" + data.amount_due + " (past due $" + data.past_due + ")"
      : "No account '" + input.value + "'.";
    if (!data.found) { p.className = "errornote"; }
    box.appendChild(p);
  }
  if (input && url) {
    input.addEventListener("input", function () {
      clearTimeout(timer);
      if (!input.value.trim()) { return; }
      timer = setTimeout(function () {
        fetch(url + "?account=" + encodeURIComponent(input.value.trim()), {credentials: "same-origin"})
          .then(function (r) { return r.json(); }).then(show).catch(function () {});
      }, 300);
    });
  }
})();
