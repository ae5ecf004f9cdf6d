// Web Worker that solves the proof of work off the page's thread. The page sends
// {type: "solve", challenge, difficulty, start, step}; the worker answers with
// {type: "progress", attempts} a few times a second and {type: "solved", nonce, attempts}
// (or {type: "error", message}). Hashing uses crypto.subtle; where the page is not a
// secure context (no crypto.subtle) the JavaScript SHA-256 of pow-solver.js stands in.
importScripts("/get-test-key/pow-solver.js");
(function () {
  "use strict";
  var stopped = false;
  self.onmessage = function (event) {
    var msg = event.data || {};
    if (msg.type === "stop") { stopped = true; return; }
    if (msg.type !== "solve") return;
    var lastReport = 0;
    self.PowSolver.solveAsync(msg.challenge, msg.difficulty, {
      subtle: self.crypto && self.crypto.subtle ? self.crypto.subtle : null,
      start: msg.start || 0,
      step: msg.step || 1,
      shouldStop: function () { return stopped; },
      onProgress: function (attempts) {
        var now = Date.now();
        if (now - lastReport < 100) return;
        lastReport = now;
        self.postMessage({ type: "progress", attempts: attempts });
      },
    }).then(function (found) {
      if (found) self.postMessage({ type: "solved", nonce: found.nonce, attempts: found.attempts });
    }, function (err) {
      self.postMessage({ type: "error", message: String(err && err.message || err) });
    });
  };
})();
