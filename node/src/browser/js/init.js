// Injected into every new document, in the page's own world, before its scripts run, so that a
// replay sees what the recorded run saw:
//
// - a seeded Math.random;
// - a virtual clock behind Date, Date.now and performance.now: it starts at FORAGER_EPOCH_MS
//   and moves only when a timer fires (to the timer's due time), when an animation frame runs
//   (one 16 ms frame), and by one microsecond per reading (so a busy-wait on the clock ends);
// - timers (setTimeout, setInterval) run from one queue ordered by (due time, creation order),
//   paced in real time as the page asked, so two loads fire the same callbacks in the same
//   order and read the same times;
// - what real input set going (timers, an animation's fast interval or frames) is tracked, so
//   that settling waits until it has run (`forager.soon`), and so are the requests the
//   page's scripts have in flight;
// - dialogs that never block (recorded on the console and dismissed);
// - trusted clicks counted (a press and a release on two elements make none).
//
// FORAGER_SEED and FORAGER_EPOCH_MS are defined before this body.
(() => {
  let state = FORAGER_SEED >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const define = (object, name, value) => {
    try {
      Object.defineProperty(object, name, { value, writable: false, configurable: false });
    } catch (e) {}
  };
  // Draws made while a handler ran for real input (`inInput`, below): an action that draws
  // is a roll of the page's dice ("Generate a number"), and its repeat may show another face
  // even when it shows the same one now. Read through `window[Symbol.for("forager.drawn")]`.
  let drawn = 0;
  const countedRandom = () => {
    if (inInput > 0) drawn += 1;
    return random();
  };
  define(Math, "random", countedRandom);
  try {
    Object.defineProperty(window, Symbol.for("forager.drawn"), { get: () => drawn, configurable: false });
  } catch (e) {}

  // The virtual clock, in milliseconds since the document started.
  let virtual = 0;
  const read = () => {
    virtual += 0.001;
    return virtual;
  };
  const advanceTo = (due) => {
    if (due > virtual) virtual = due;
  };

  const RealDate = Date;
  const wallNow = () => FORAGER_EPOCH_MS + Math.floor(read());
  class ForagerDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(wallNow());
      else super(...args);
    }
    static now() {
      return wallNow();
    }
  }
  define(window, "Date", ForagerDate);
  try {
    const now = () => read();
    Object.defineProperty(Performance.prototype, "now", { value: now, writable: false, configurable: false });
  } catch (e) {}

  // Timers: a binary heap of pending timers by (due, sequence); cancelled ones are skipped.
  const realSetTimeout = window.setTimeout.bind(window);
  const realClearTimeout = window.clearTimeout.bind(window);
  const realRaf = window.requestAnimationFrame ? window.requestAnimationFrame.bind(window) : null;
  const channel = new MessageChannel();
  const heap = [];
  const live = new Map(); // id → timer
  let sequence = 0;
  let nextId = 1;
  let armed = null; // the real timer or message that will run the head, and its due time
  // Timers caused by real input: created while a handler ran for a trusted event (`inInput`),
  // or by such a timer's callback (up to three generations, so a poll loop is not followed
  // forever). A page that answers typing after a delay (an autocomplete's 300 ms) is not settled
  // until they have run; `forager.soon` says how long the next one has to go (-1: none soon).
  let inInput = 0;
  let runningCause = 0;
  // Whether a timer's or an animation frame's callback runs now (for writes the page sends on
  // its own, below).
  let inTimer = false;
  const SOON_MS = 1000;
  const ANIMATION_TICK_MS = 50;
  // Animation frames requested by real input (or by such a frame's callback), pending now;
  // a chain is followed for at most ANIMATION_FRAMES frames (an endless spinner is not waited
  // for).
  const ANIMATION_FRAMES = 90;
  const causedFrames = new Set();
  let frameBudget = 0;
  let inCausedFrame = false;
  const before = (a, b) => a.due < b.due || (a.due === b.due && a.seq < b.seq);
  const push = (timer) => {
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  };
  const pop = () => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  };
  const head = () => {
    while (heap.length > 0 && heap[0].cancelled) pop();
    return heap[0];
  };
  const arm = () => {
    const next = head();
    if (!next) return;
    if (armed && armed.due <= next.due) return;
    if (armed && armed.handle !== null) realClearTimeout(armed.handle);
    const delay = Math.max(0, next.due - virtual);
    // Zero delays go through a message (nested real timeouts are clamped to 4 ms).
    armed = delay < 1 ? { due: next.due, handle: null } : { due: next.due, handle: realSetTimeout(fire, delay) };
    if (armed.handle === null) channel.port2.postMessage(0);
  };
  // Runs one timer per task, as a browser does; microtasks run in between.
  const fire = () => {
    armed = null;
    const timer = head();
    if (!timer) return;
    pop();
    advanceTo(timer.due);
    if (timer.interval) {
      timer.due = virtual + timer.delay;
      timer.seq = sequence++;
      push(timer);
    } else {
      live.delete(timer.id);
    }
    runningCause = timer.caused;
    inTimer = true;
    try {
      timer.callback.apply(window, timer.args);
    } catch (error) {
      if (typeof reportError === "function") reportError(error);
    } finally {
      runningCause = 0;
      inTimer = false;
    }
    arm();
  };
  channel.port1.onmessage = fire;
  const add = (callback, delay, args, interval) => {
    const fn = typeof callback === "function" ? callback : () => (0, eval)(String(callback));
    const ms = Math.max(interval ? 1 : 0, Number(delay) || 0);
    // An interval counts only when it ticks fast and real input started it (an animation's
    // ticks: jQuery's fades run on a 13 ms interval), and only for its first second: a clock
    // or a poll loop is not waited for.
    const caused = interval
      ? ms <= ANIMATION_TICK_MS && inInput > 0 ? 1 : 0
      : inInput > 0 ? 1 : runningCause > 0 && runningCause < 3 ? runningCause + 1 : 0;
    const until = interval ? virtual + SOON_MS : Infinity;
    const timer = { id: nextId++, due: virtual + ms, seq: sequence++, delay: ms, callback: fn, args, interval, cancelled: false, caused, until };
    live.set(timer.id, timer);
    push(timer);
    arm();
    return timer.id;
  };
  const cancel = (id) => {
    const timer = live.get(id);
    if (timer) {
      timer.cancelled = true;
      live.delete(id);
    }
  };
  // Requests the page's scripts have in flight (fetch, XMLHttpRequest), by start time: a
  // single-page app shows its "Loading…" shell with the document complete and its element
  // count still until its data arrives, so settling waits for young requests to end. One
  // older than REQUEST_WAIT_MS (a long poll, a stream) is not waited for.
  const inFlight = new Map();
  let requestId = 0;
  const REQUEST_WAIT_MS = 2500;
  const REQUEST_POLL_MS = 25;
  try {
    Object.defineProperty(window, Symbol.for("forager.soon"), {
      get: () => {
        let soonest = -1;
        const now = RealDate.now();
        for (const started of inFlight.values()) {
          if (now - started < REQUEST_WAIT_MS) {
            soonest = REQUEST_POLL_MS;
            break;
          }
        }
        for (const timer of live.values()) {
          const left = Math.max(0, timer.due - virtual);
          if (timer.caused && !timer.cancelled && timer.due <= timer.until && left <= SOON_MS && (soonest < 0 || left < soonest)) soonest = left;
        }
        if (causedFrames.size > 0 && (soonest < 0 || soonest > 16)) soonest = 16;
        return soonest;
      },
      configurable: false,
    });
  } catch (e) {}
  define(window, "setTimeout", (callback, delay, ...args) => add(callback, delay, args, false));
  define(window, "setInterval", (callback, delay, ...args) => add(callback, delay, args, true));
  define(window, "clearTimeout", cancel);
  define(window, "clearInterval", cancel);
  if (realRaf) {
    // Each frame is 16 ms of virtual time; callbacks of one frame share its virtual time.
    let lastFrame = null;
    let frameTime = 0;
    define(window, "requestAnimationFrame", (callback) => {
      if (inInput > 0) frameBudget = ANIMATION_FRAMES;
      const caused = (inInput > 0 || runningCause > 0 || inCausedFrame) && frameBudget > 0;
      if (caused) frameBudget -= 1;
      const id = realRaf((real) => {
        if (real !== lastFrame) {
          lastFrame = real;
          advanceTo(frameTime + 16);
          frameTime = virtual;
        }
        causedFrames.delete(id);
        inCausedFrame = caused;
        inTimer = true;
        try {
          callback(frameTime);
        } finally {
          inCausedFrame = false;
          inTimer = false;
        }
      });
      if (caused) causedFrames.add(id);
      return id;
    });
    const realCancelRaf = window.cancelAnimationFrame.bind(window);
    define(window, "cancelAnimationFrame", (id) => {
      causedFrames.delete(id);
      return realCancelRaf(id);
    });
  }

  // Elements that listen for pointer input: a page's own handlers (`addEventListener`,
  // `onclick = …`, jQuery and d3 both end in these) are the only sign that a plain <div>, <span>
  // or SVG shape does something when clicked. The mark is an attribute because the observation
  // runs in an isolated world, which shares the DOM but not the page's objects.
  //
  // And how often the page's own element handlers ran for real (trusted) input: a click whose
  // only effect is in the page's script state (a button that must be pressed before another)
  // changes nothing the fingerprint sees, yet did something. Read from the page's world
  // through `window[Symbol.for("forager.handled")]`.
  const POINTER_EVENTS = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "dblclick", "touchstart"]);
  const INPUT_EVENTS = new Set([...POINTER_EVENTS, "keydown", "keyup", "keypress", "input", "change"]);
  // What a click or a key sets off besides: a widget that opens on focus (a date picker) or
  // when the pointer comes over it (a menu's submenu, 300 ms after its item is entered) is
  // input-caused too, though its handler running is no sign that the action did something.
  const HOVER_EVENTS = ["mouseover", "mouseout", "mouseenter", "mouseleave", "pointerover", "pointerout", "pointerenter", "pointerleave"];
  const CAUSE_EVENTS = new Set([...INPUT_EVENTS, "focus", "focusin", "blur", "focusout", ...HOVER_EVENTS]);
  const MARK = "data-forager-listens";
  let handled = 0;
  try {
    Object.defineProperty(window, Symbol.for("forager.handled"), { get: () => handled, configurable: false });
  } catch (e) {}
  const mark = (target, type) => {
    try {
      if (POINTER_EVENTS.has(type) && target instanceof Element && !target.hasAttribute(MARK)) {
        target.setAttribute(MARK, "");
      }
    } catch (e) {}
  };
  // Whether a handler on this target counts: an element's own, not the page's or the body's
  // catch-all listeners (which run on every click).
  const counted = (target, type) =>
    CAUSE_EVENTS.has(type) && target instanceof Element && target !== document.documentElement && target !== document.body;
  // One wrapper per listener, so that removeEventListener finds what addEventListener added.
  const wrappers = new WeakMap();
  const wrap = (listener) => {
    if (!listener || (typeof listener !== "function" && typeof listener.handleEvent !== "function")) return listener;
    let wrapper = wrappers.get(listener);
    if (!wrapper) {
      wrapper = function (event) {
        const trusted = Boolean(event && event.isTrusted);
        if (trusted) inInput += 1;
        // A handler that answers `false` refused the input (a board's taken cell, a disabled
        // step): it ran, but did nothing that counts. Anything else, a throw included, counts.
        let result;
        try {
          result = typeof listener === "function" ? listener.apply(this, arguments) : listener.handleEvent(event);
          return result;
        } finally {
          if (trusted) {
            inInput -= 1;
            if (INPUT_EVENTS.has(event.type) && result !== false) handled += 1;
          }
        }
      };
      wrappers.set(listener, wrapper);
    }
    return wrapper;
  };
  // Whether a click arrived: a press and a release on two elements make no click, which is
  // what happens when the page renders its list again between them (a new element under the
  // pointer). Trusted clicks are counted, and the last press's target remembered, so that the
  // clicker can tell that case (no click, the pressed element gone) and press again. Read
  // through `window[Symbol.for("forager.clicks")]`.
  let clicks = 0;
  let pressed = null;
  try {
    window.addEventListener("mousedown", (event) => { if (event.isTrusted) pressed = event.target; }, true);
    window.addEventListener("click", (event) => { if (event.isTrusted) clicks += 1; }, true);
    Object.defineProperty(window, Symbol.for("forager.clicks"), {
      get: () => ({ clicks, pressedGone: Boolean(pressed && pressed.isConnected === false) }),
      configurable: false,
    });
  } catch (e) {}
  const realAdd = EventTarget.prototype.addEventListener;
  const realRemove = EventTarget.prototype.removeEventListener;
  define(EventTarget.prototype, "addEventListener", function (type, listener, options) {
    mark(this, type);
    return realAdd.call(this, type, counted(this, type) ? wrap(listener) : listener, options);
  });
  define(EventTarget.prototype, "removeEventListener", function (type, listener, options) {
    const wrapper = listener && wrappers.get(listener);
    if (wrapper) realRemove.call(this, type, wrapper, options);
    return realRemove.call(this, type, listener, options);
  });
  for (const type of ["click", "mousedown", "mouseup", "dblclick", "keydown", "keyup", "keypress", "input", "change", "focus", "blur", "mouseover", "mouseout"]) {
    const property = Object.getOwnPropertyDescriptor(HTMLElement.prototype, "on" + type);
    if (!property || !property.set) continue;
    const originals = new WeakMap();
    try {
      Object.defineProperty(HTMLElement.prototype, "on" + type, {
        configurable: true,
        enumerable: property.enumerable,
        get() {
          const value = property.get.call(this);
          return (value && originals.get(value)) || value;
        },
        set(value) {
          if (value) mark(this, type);
          const handler = typeof value === "function" && counted(this, type) ? wrap(value) : value;
          if (handler !== value) originals.set(handler, value);
          property.set.call(this, handler);
        },
      });
    } catch (e) {}
  }

  // Writes the page sends on its own (a heartbeat, a poll that saves, an autosave on a
  // timer): a fetch or an XMLHttpRequest that writes, sent from a timer or an animation frame
  // that no real input set going, or when no real input came for IDLE_MS, carries the header
  // X-Forager-Background. forager's network gate refuses such a write and charges it to no
  // action; the header never reaches a server. What real input causes (its handlers, the
  // timers they set) is not marked.
  const IDLE_MS = 5000;
  let lastInput = -Infinity;
  for (const type of ["pointerdown", "mousedown", "mouseup", "click", "keydown", "keyup", "input", "change", "focusin", "submit"]) {
    try {
      realAdd.call(window, type, (event) => {
        if (event.isTrusted) lastInput = RealDate.now();
      }, { capture: true, passive: true });
    } catch (e) {}
  }
  const onItsOwn = () =>
    inInput === 0 && ((inTimer && runningCause === 0 && !inCausedFrame) || RealDate.now() - lastInput > IDLE_MS);
  const SAFE_METHODS = ["GET", "HEAD", "OPTIONS"];
  const BACKGROUND = "X-Forager-Background";
  const realFetch = window.fetch;
  if (typeof realFetch === "function") {
    window.fetch = function (input, init) {
      try {
        if (onItsOwn()) {
          const method = String((init && init.method) || (input instanceof Request ? input.method : "GET")).toUpperCase();
          if (!SAFE_METHODS.includes(method)) {
            const headers = new Headers((init && init.headers) || (input instanceof Request ? input.headers : undefined));
            headers.set(BACKGROUND, "1");
            init = Object.assign({}, init || {}, { headers });
          }
        }
      } catch (e) {}
      const id = ++requestId;
      inFlight.set(id, RealDate.now());
      const done = () => inFlight.delete(id);
      try {
        const answer = realFetch.call(this, input, init);
        answer.then(done, done);
        return answer;
      } catch (e) {
        done();
        throw e;
      }
    };
  }
  if (window.XMLHttpRequest) {
    const METHOD = Symbol("forager.method");
    const proto = XMLHttpRequest.prototype;
    const realOpen = proto.open;
    const realSend = proto.send;
    const realSetHeader = proto.setRequestHeader;
    proto.open = function (method) {
      try {
        this[METHOD] = String(method).toUpperCase();
      } catch (e) {}
      return realOpen.apply(this, arguments);
    };
    proto.send = function () {
      try {
        if (this[METHOD] && !SAFE_METHODS.includes(this[METHOD]) && onItsOwn()) realSetHeader.call(this, BACKGROUND, "1");
      } catch (e) {}
      const id = ++requestId;
      inFlight.set(id, RealDate.now());
      try {
        realAdd.call(this, "loadend", () => inFlight.delete(id), { once: true });
        return realSend.apply(this, arguments);
      } catch (e) {
        inFlight.delete(id);
        throw e;
      }
    };
  }

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
