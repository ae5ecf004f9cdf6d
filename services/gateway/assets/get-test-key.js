// Fetches a proof-of-work challenge, has Web Workers solve it (pow-worker.js, on
// crypto.subtle) while this page shows the progress and stays responsive, posts the form
// with the solution as challenge_token, and shows the key once with a copy button,
// then the next step: a first lookup to paste (with the new key and a test number) and
// where the test values, the reference and the way to live access are.
(function () {
  "use strict";
  var form = document.getElementById("form");
  var button = document.getElementById("submit");
  var out = document.getElementById("result");
  var progress = document.getElementById("progress");
  var progressText = document.getElementById("progress-text");
  var progressBar = document.getElementById("progress-bar");
  var WORKER_URL = "/get-test-key/pow-worker.js";
  var number = function (n) { return Math.round(n).toLocaleString("en-US"); };

  function show(text) {
    out.hidden = false;
    out.textContent = text;
  }

  function showKey(key) {
    out.hidden = false;
    out.textContent = "";
    var p = document.createElement("p");
    p.textContent = "Your test key (shown once, copy it now):";
    var row = document.createElement("div");
    row.className = "key-row";
    var k = document.createElement("code");
    k.id = "key";
    k.className = "key";
    k.textContent = key;
    var copy = document.createElement("button");
    copy.id = "copy";
    copy.type = "button";
    copy.textContent = "Copy";
    var status = document.createElement("p");
    status.id = "copy-status";
    status.setAttribute("role", "status");
    copy.addEventListener("click", function () {
      copyText(key, k).then(
        function () { status.textContent = "Copied to the clipboard."; copy.textContent = "Copied"; },
        function () { status.textContent = "Could not copy: select the key and copy it by hand."; },
      );
    });
    row.appendChild(k);
    row.appendChild(copy);
    out.appendChild(p);
    out.appendChild(row);
    out.appendChild(status);
  }

  // The first call to paste into a terminal: the documented clean test number, two checks.
  function firstCall(key) {
    return "curl -s " + window.location.origin + "/v1/lookup \\\n" +
      "  -H \"Authorization: Bearer " + key + "\" \\\n" +
      "  -H \"Content-Type: application/json\" \\\n" +
      "  -d '{\"numbers\": [\"+12025550100\"], \"checks\": [\"number.spam\", \"whatsapp\"]}'";
  }

  function link(href, text) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function showNextStep(key, liveAccess) {
    var next = document.createElement("section");
    next.id = "next";
    var h = document.createElement("h2");
    h.textContent = "Next: your first lookup";
    var intro = document.createElement("p");
    intro.textContent = "Paste this into a terminal. +12025550100 is a test number: it answers as a clean mobile number, every time, and nothing is billed.";
    var pre = document.createElement("pre");
    var code = document.createElement("code");
    code.id = "first-call";
    code.textContent = firstCall(key);
    pre.appendChild(code);
    var copy = document.createElement("button");
    copy.id = "copy-call";
    copy.type = "button";
    copy.textContent = "Copy the command";
    copy.addEventListener("click", function () {
      copyText(code.textContent, code).then(function () { copy.textContent = "Copied"; }, function () { copy.textContent = "Select and copy it by hand"; });
    });
    var more = document.createElement("p");
    more.id = "next-links";
    more.appendChild(document.createTextNode("Every test value and its answer: "));
    more.appendChild(link("/docs/test-mode", "test mode"));
    more.appendChild(document.createTextNode(". Every operation, with samples: "));
    more.appendChild(link("/docs", "the API reference"));
    more.appendChild(document.createTextNode(". From test to live answers: "));
    more.appendChild(link("/docs/going-live", "going live"));
    more.appendChild(document.createTextNode("."));
    next.appendChild(h);
    next.appendChild(intro);
    next.appendChild(pre);
    next.appendChild(copy);
    next.appendChild(more);
    if (liveAccess && liveAccess.note) {
      var live = document.createElement("p");
      live.id = "live-access";
      live.textContent = liveAccess.note;
      next.appendChild(live);
    }
    out.appendChild(next);
  }

  // The asynchronous Clipboard API; where it is refused, the older selection + copy command.
  function copyText(text, element) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      return navigator.clipboard.writeText(text).catch(function () { return legacyCopy(element); });
    }
    return legacyCopy(element);
  }
  function legacyCopy(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    return document.execCommand("copy") ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function showProgress(attempts, expected, done) {
    progress.hidden = false;
    progressBar.max = expected;
    progressBar.value = Math.min(attempts, expected);
    progressText.textContent = done
      ? "Puzzle solved after " + number(attempts) + " attempts (about " + number(expected) + " expected)."
      : "Solving the puzzle: " + number(attempts) + " attempts of about " + number(expected) + " expected…";
  }

  /**
   * Solves with a few workers sharing the nonces (worker i tries i, i+n, i+2n, …), one core
   * left for the page. Resolves to the nonce; falls back to this page when workers cannot start.
   */
  function solve(challenge, difficulty) {
    var expected = Math.pow(2, difficulty);
    showProgress(0, expected, false);
    var count = Math.max(1, Math.min(4, (navigator.hardwareConcurrency || 2) - 1));
    var workers = [];
    try {
      for (var i = 0; i < count; i++) workers.push(new Worker(WORKER_URL));
    } catch (err) {
      workers.forEach(function (w) { w.terminate(); });
      return solveHere(challenge, difficulty, expected);
    }
    return new Promise(function (resolve, reject) {
      var attempts = workers.map(function () { return 0; });
      var total = function () { return attempts.reduce(function (a, b) { return a + b; }, 0); };
      var settled = false;
      var finish = function () { settled = true; workers.forEach(function (w) { w.terminate(); }); };
      workers.forEach(function (worker, i) {
        worker.onmessage = function (event) {
          var msg = event.data;
          if (settled) return;
          if (msg.type === "progress") {
            attempts[i] = msg.attempts;
            showProgress(total(), expected, false);
          } else if (msg.type === "solved") {
            attempts[i] = msg.attempts;
            finish();
            showProgress(total(), expected, true);
            resolve(msg.nonce);
          } else if (msg.type === "error") {
            finish();
            reject(new Error(msg.message));
          }
        };
        // The worker could not load or run (blocked, offline, a browser without it): solve here.
        worker.onerror = function (event) {
          event.preventDefault();
          if (settled) return;
          finish();
          resolve(solveHere(challenge, difficulty, expected));
        };
        worker.postMessage({ type: "solve", challenge: challenge, difficulty: difficulty, start: i, step: workers.length });
      });
    });
  }

  // No workers: the same asynchronous solver on this page (slower, but it still yields).
  function solveHere(challenge, difficulty, expected) {
    var last = 0;
    return window.PowSolver.solveAsync(challenge, difficulty, {
      subtle: window.crypto && window.crypto.subtle ? window.crypto.subtle : null,
      onProgress: function (attempts) {
        if (Date.now() - last > 100) { last = Date.now(); showProgress(attempts, expected, false); }
      },
    }).then(function (found) {
      showProgress(found.attempts, expected, true);
      return found.nonce;
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    button.disabled = true;
    out.hidden = true;
    fetch("/v1/test-keys/challenge")
      .then(function (r) { return r.json(); })
      .then(function (c) {
        if (!c.challenge) throw Object.assign(new Error((c.error && c.error.message) || "No puzzle was issued."), { shown: true });
        return solve(c.challenge, c.difficulty).then(function (nonce) {
          var body = {
            email: form.email.value, name: form.name.value, company: form.company.value,
            use_case: form.use_case.value, challenge_token: c.challenge + ":" + nonce,
          };
          return fetch("/v1/test-keys", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
        });
      })
      .then(function (r) { return r.json(); })
      .then(function (j) {
        if (j.key) {
          showKey(j.key);
          showNextStep(j.key, j.live_access);
        }
        else show((j.error && j.error.message) || "Something went wrong.");
      })
      .catch(function (err) { show(err && err.shown ? err.message : "Could not reach the service. Please try again."); })
      .then(function () { button.disabled = false; });
  });
})();
