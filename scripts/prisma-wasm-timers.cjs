// The WebAssembly schema engine arms a 10 s timer (its lock timeout) that it never
// clears, so every `prisma migrate` command would sit idle for 10 s after finishing.
// Timers created from WebAssembly are unref'd: they still fire while the engine
// works, but no longer keep a finished process alive.
const originalSetTimeout = global.setTimeout;
global.setTimeout = function setTimeoutUnrefFromWasm(fn, ms, ...args) {
  const timer = originalSetTimeout.call(this, fn, ms, ...args);
  if (ms >= 1000 && /wasm:\/\//.test(new Error().stack || "")) timer.unref();
  return timer;
};
