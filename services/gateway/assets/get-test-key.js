// Fetches a proof-of-work challenge, solves it with pow-solver.js, and posts the
// form with the solution as challenge_token.
(function () {
  "use strict";
  var solve = window.PowSolver.solve;
  var form = document.getElementById("form");
  var out = document.getElementById("result");
  var button = document.getElementById("submit");
  function show(text, isKey) {
    out.hidden = false;
    out.textContent = "";
    if (isKey) {
      var p = document.createElement("p");
      p.textContent = "Your test key (shown once, copy it now):";
      var k = document.createElement("div");
      k.className = "key";
      k.textContent = text;
      out.appendChild(p);
      out.appendChild(k);
    } else {
      out.textContent = text;
    }
  }
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    button.disabled = true;
    show("Solving the puzzle…");
    fetch("/v1/test-keys/challenge")
      .then(function (r) { return r.json(); })
      .then(function (c) {
        var token = c.challenge + ":" + solve(c.challenge, c.difficulty);
        var body = {
          email: form.email.value, name: form.name.value, company: form.company.value,
          use_case: form.use_case.value, challenge_token: token,
        };
        return fetch("/v1/test-keys", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      })
      .then(function (r) { return r.json(); })
      .then(function (j) {
        if (j.key) show(j.key, true);
        else show((j.error && j.error.message) || "Something went wrong.");
      })
      .catch(function () { show("Could not reach the service. Please try again."); })
      .then(function () { button.disabled = false; });
  });
})();
