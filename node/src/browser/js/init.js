// Injected into every new document, in the page's own world, before its scripts run: a seeded
// Math.random and a Date whose clock starts at a fixed epoch, so that a replay sees what the
// recorded run saw; and dialogs that never block (recorded on the console and dismissed).
// FORAGER_SEED and FORAGER_EPOCH_MS are defined before this body.
(() => {
  let state = FORAGER_SEED >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  try {
    Object.defineProperty(Math, "random", { value: random, writable: false, configurable: false });
  } catch (e) {}
  const RealDate = Date;
  const origin = performance.now();
  const now = () => FORAGER_EPOCH_MS + Math.floor(performance.now() - origin);
  class ForagerDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(now());
      else super(...args);
    }
    static now() {
      return now();
    }
  }
  try {
    Object.defineProperty(window, "Date", { value: ForagerDate, writable: false, configurable: false });
  } catch (e) {}
  const note = (kind, message) => {
    try {
      console.warn("[forager:dialog:" + kind + "] " + String(message).slice(0, 300));
    } catch (e) {}
  };
  window.alert = (message) => note("alert", message);
  window.confirm = (message) => {
    note("confirm", message);
    return false;
  };
  window.prompt = (message) => {
    note("prompt", message);
    return null;
  };
})();
