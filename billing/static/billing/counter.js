// The counter page (templates/admin/billing/payment/counter.html): the account typed, looked up as it is typed, and
// buttons that fill the amount with what is past due or all that is due.
(function () {
  const input = document.getElementById("id_account_no");
  const amount = document.getElementById("id_amount");
  const box = document.getElementById("counter-account");
  const fill = document.getElementById("counter-fill");
  const url = box && box.dataset.lookup;
  let timer = null;
  function button(label, value) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "button fill-amount";
    b.dataset.amount = value;
    b.textContent = label + ": $" + value;
    return b;
  }
  function show(data) {
    box.textContent = "";
    const p = document.createElement("p");
    p.textContent = data.found
      ? data.name + ", " + data.service_address + ": due now $" + data.amount_due + " (past due $" + data.past_due + ")"
        + (data.stop ? "; " + data.stop.words.toLowerCase() + " $" + data.stop.amount + " (case " + data.stop.case + ")" : "")
      : "No account '" + input.value + "'.";
    if (!data.found) { p.className = "errornote"; }
    box.appendChild(p);
    if (!fill) { return; }
    fill.textContent = "";
    if (!data.found) { return; }
    if (data.stop) { fill.appendChild(button(data.stop.words, data.stop.amount)); }
    const past = parseFloat(data.past_due), due = parseFloat(data.amount_due);
    if (past > 0) { fill.appendChild(button("Pay past due", data.past_due)); }
    if (due > 0) { fill.appendChild(button(past > 0 && due > past ? "Pay all that is due" : "Pay the amount due",
                                           data.amount_due)); }
  }
  if (fill && amount) {
    fill.addEventListener("click", function (event) {
      const target = event.target.closest(".fill-amount");
      if (target) { amount.value = target.dataset.amount; amount.focus(); }
    });
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
