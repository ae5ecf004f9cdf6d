// Proof-of-work solver for GET /v1/test-keys/challenge: find a nonce such that
// SHA-256("<challenge>:<nonce>") starts with `difficulty` zero bits. Loaded by the
// worker (pow-worker.js, which hashes with crypto.subtle), by the page as its fallback,
// and by the test suite (which checks the hash against Node's SHA-256 and the server).
(function (root) {
  "use strict";
  var K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
  var W = new Uint32Array(64);
  // SHA-256 of an ASCII string; returns the first 32-bit word (enough for up to 32 bits of difficulty).
  // Used where crypto.subtle is missing (a page served over plain HTTP from another host).
  function sha256FirstWord(s) {
    var n = s.length, blocks = ((n + 8) >> 6) + 1, words = new Uint32Array(blocks * 16), i;
    for (i = 0; i < n; i++) words[i >> 2] |= s.charCodeAt(i) << (24 - (i & 3) * 8);
    words[n >> 2] |= 0x80 << (24 - (n & 3) * 8);
    words[blocks * 16 - 1] = n * 8;
    var h0 = 0x6a09e667, h1 = 0xbb67ae85, h2 = 0x3c6ef372, h3 = 0xa54ff53a, h4 = 0x510e527f, h5 = 0x9b05688c, h6 = 0x1f83d9ab, h7 = 0x5be0cd19;
    for (var b = 0; b < blocks; b++) {
      for (i = 0; i < 16; i++) W[i] = words[b * 16 + i];
      for (i = 16; i < 64; i++) {
        var x = W[i - 15], y = W[i - 2];
        var s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
        var s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
        W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
      }
      var a = h0, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7, bb = h1;
      for (i = 0; i < 64; i++) {
        var S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        var t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
        var S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        var t2 = (S0 + ((a & bb) ^ (a & c) ^ (bb & c))) | 0;
        h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = bb; bb = a; a = (t1 + t2) | 0;
      }
      h0 = (h0 + a) | 0; h1 = (h1 + bb) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
      h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
    }
    return h0 >>> 0;
  }
  // Synchronous: for tests and tools only; it blocks whatever thread runs it.
  function solve(challenge, difficulty) {
    var limit = difficulty >= 32 ? 1 : Math.pow(2, 32 - difficulty);
    for (var i = 0; ; i++) {
      var nonce = i.toString(36);
      if (sha256FirstWord(challenge + ":" + nonce) < limit) return nonce;
    }
  }
  // Leading zero bits of a digest, counted as the server counts them.
  function leadingZeroBits(bytes) {
    var bits = 0;
    for (var i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0) { bits += 8; continue; }
      return bits + Math.clz32(bytes[i]) - 24;
    }
    return bits;
  }
  /**
   * Asynchronous solver. Tries nonces start, start+step, start+2*step, … (base 36), so
   * several workers can share the search. With `options.subtle` (crypto.subtle) it hashes
   * `batch` candidates at once with SHA-256 digests that resolve off this thread; without
   * it, the JavaScript hash above runs in slices. Between batches it awaits, so the thread
   * stays free for messages (a stop) and, on a page, for rendering.
   * options: { subtle, start = 0, step = 1, batch = 256, onProgress(attempts), shouldStop() }
   * Resolves to { nonce, attempts }, or to null when shouldStop() said so.
   */
  function solveAsync(challenge, difficulty, options) {
    options = options || {};
    var subtle = options.subtle || null;
    // The JavaScript hash needs bigger slices: each timer between them costs a few milliseconds.
    var step = options.step || 1, next = options.start || 0, batch = options.batch || (subtle ? 256 : 4096);
    var attempts = 0;
    var prefix = challenge + ":";
    var limit = difficulty >= 32 ? 1 : Math.pow(2, 32 - difficulty);
    var bytes = new Uint8Array(prefix.length + 16);
    for (var p = 0; p < prefix.length; p++) bytes[p] = prefix.charCodeAt(p);

    function digestOf(nonce) {
      for (var i = 0; i < nonce.length; i++) bytes[prefix.length + i] = nonce.charCodeAt(i);
      // digest() copies its input before it returns, so one buffer serves every candidate.
      return subtle.digest("SHA-256", bytes.subarray(0, prefix.length + nonce.length));
    }
    function round() {
      if (options.shouldStop && options.shouldStop()) return Promise.resolve(null);
      var nonces = [];
      for (var i = 0; i < batch; i++, next += step) nonces.push(next.toString(36));
      var checked;
      if (subtle) {
        checked = Promise.all(nonces.map(digestOf)).then(function (digests) {
          for (var j = 0; j < digests.length; j++) if (leadingZeroBits(new Uint8Array(digests[j])) >= difficulty) return j;
          return -1;
        });
      } else {
        var found = -1;
        for (var j = 0; j < nonces.length && found < 0; j++) if (sha256FirstWord(prefix + nonces[j]) < limit) found = j;
        // A timer, not a microtask, so the thread really gets to handle what is waiting.
        checked = new Promise(function (resolve) { setTimeout(resolve, 0, found); });
      }
      return checked.then(function (j) {
        attempts += j < 0 ? nonces.length : j + 1;
        if (options.onProgress) options.onProgress(attempts);
        return j < 0 ? round() : { nonce: nonces[j], attempts: attempts };
      });
    }
    return round();
  }
  var api = { sha256FirstWord: sha256FirstWord, solve: solve, solveAsync: solveAsync, leadingZeroBits: leadingZeroBits };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.PowSolver = api;
})(typeof self !== "undefined" ? self : this);
