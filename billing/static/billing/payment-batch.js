// The payment batch page (templates/admin/billing/payment/batch.html): the running total of the amounts typed.
(function () {
  const form = document.getElementById("payment-batch");
  function update() {
    let cents = 0, count = 0;
    form.querySelectorAll("input[name$='-amount']").forEach(function (input) {
      const value = parseFloat(input.value.replace(/[$,]/g, ""));
      if (!isNaN(value) && value > 0) { cents += Math.round(value * 100); count += 1; }
    });
    document.getElementById("batch-total").textContent = "$" + (cents / 100).toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
    document.getElementById("batch-count").textContent = count;
  }
  form.addEventListener("input", update);
  update();
})();
