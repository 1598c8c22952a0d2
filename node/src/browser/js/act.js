// forager's action helpers, evaluated in an isolated world with OP, LOCATORS, EXPECT (the
// target's role and accessible name) and ARG defined before this body. Resolves the target along
// its locator chain (CSS, role + name, text, position relative to a stable neighbour, place in
// a repeated item known by its text, what it is about) and
// reports which locator matched, so a healed step can be recorded. A CSS path that finds an
// element of another name (the page was reordered) does not count as found; if no locator finds
// the element, that element is used as the last resort, unless it links elsewhere than the
// target's declared address.
const VALUE_INPUTS = ["date", "time", "datetime-local", "month", "week", "color", "range"];
// A value in the form people write it, in the form the input wants: 01/10/2010 → 2010-01-10,
// 11:57 PM → 23:57, 03/2016 → 2016-03; anything else as given.
const pickerValue = (type, text) => {
  const pad = (n) => String(n).padStart(2, "0");
  const time = (t) => {
    const m = t.match(/^(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?$/);
    if (!m) return t;
    let hour = Number(m[1]) % (m[4] ? 12 : 24);
    if (m[4] && m[4].toLowerCase() === "pm") hour += 12;
    return `${pad(hour)}:${m[2]}` + (m[3] ? `:${m[3]}` : "");
  };
  const date = (d) => {
    const m = d.match(/^(\d{1,2})\/(\d{1,2})\/(\d{4})$/);
    return m ? `${m[3]}-${pad(m[1])}-${pad(m[2])}` : d;
  };
  if (type === "time") return time(text);
  if (type === "date") return date(text);
  if (type === "month") {
    const m = text.match(/^(\d{1,2})\/(\d{4})$/);
    return m ? `${m[2]}-${pad(m[1])}` : text;
  }
  if (type === "datetime-local") {
    const [d, ...t] = text.split(/\s+/);
    return t.length ? `${date(d)}T${time(t.join(" "))}` : date(d);
  }
  return text;
};
const norm = (s) => clip(s, 200).toLowerCase().replace(/[0-9]+/g, "#");
// The name the page's scripts compute (the Role locator's): the target's own name may be the
// accessibility tree's, which these scripts cannot compute.
const roleLocator = LOCATORS.find((l) => l.Role !== undefined);
const wantName = norm(roleLocator ? roleLocator.Role.name : EXPECT.name);
const findBy = (locator) => {
  if (locator.Css !== undefined) {
    const all = resolveCss(locator.Css);
    return all.find(visible) || all[0] || null;
  }
  if (locator.Near !== undefined) return nearTarget(locator.Near);
  if (locator.InItem !== undefined) return itemTarget(locator.InItem);
  if (locator.Described !== undefined) return describedTarget(locator.Described);
  const pool = deepAll(INTERACTIVE + ", div, span, li, td, label");
  if (locator.Role !== undefined) {
    const want = norm(locator.Role.name);
    const matches = pool.filter((el) => (roleOf(el) || "clickable") === locator.Role.role && norm(nameOf(el)) === want);
    return matches.find(visible) || matches[0] || null;
  }
  if (locator.Text !== undefined) {
    const want = norm(locator.Text);
    const matches = pool.filter((el) => norm(textOf(el)) === want);
    // The innermost match: the element itself rather than a container of it.
    const inner = matches.filter((el) => !matches.some((o) => o !== el && el.contains(o)));
    return inner.find(visible) || inner[0] || null;
  }
  return null;
};
// Whether an element found by a CSS path is the one meant.
const meant = (el) => !wantName || norm(nameOf(el)) === wantName;

let el = null;
let used = -1;
let lastResort = null;
for (let i = 0; i < LOCATORS.length; i++) {
  const found = findBy(LOCATORS[i]);
  if (!found) continue;
  if (LOCATORS[i].Css !== undefined && !meant(found)) {
    if (!lastResort) lastResort = { el: found, index: i };
    continue;
  }
  el = found;
  used = i;
  break;
}
// The last resort is not taken where the target is a link to a known address and it links
// elsewhere (a listing that lost the row: its next row's link is another record's).
if (!el && lastResort && !(EXPECT.href && lastResort.el.href && lastResort.el.href !== EXPECT.href)) {
  el = lastResort.el;
  used = lastResort.index;
}
if (!el) return { status: "missing" };
// A terminal's key catcher is out of sight by design: it is typed into, nothing else.
const catcher = OP === "focus_clear" && keyCatcher(el);
if (!visible(el) && !catcher) return { status: "hidden", locator: used };
// A disabled box still scrolls (an agreement that unlocks its form once read to the end).
if (el.disabled && OP !== "scroll") return { status: "disabled", locator: used };

switch (OP) {
  case "point": {
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    const point = clickPoint(el);
    if (!point) return { status: "hidden", locator: used };
    const { x, y } = point;
    if (!point.lands) {
      const top = document.elementFromPoint(x, y);
      const by = top ? clip(top.tagName + " " + (top.id ? "#" + top.id : "") + " " + textOf(top), 80) : "another element";
      return { status: "covered", locator: used, covered_by: by };
    }
    return { status: "ok", locator: used, x, y };
  }
  case "focus_clear": {
    el.scrollIntoView({ block: "center", behavior: "instant" });
    // A read-only field takes no typing, and a person's picker would not write into it
    // either: its value comes from the widget it opens (a calendar), by clicks.
    if (el.readOnly) return { status: "readonly", locator: used };
    // Date, time, colour and range inputs take no typed text: their value is set, as a
    // person's picker would set it (see "set_value").
    if (el.tagName === "INPUT" && VALUE_INPUTS.includes((el.getAttribute("type") || "").toLowerCase())) {
      return { status: "ok", locator: used, picker: true };
    }
    el.focus();
    if ("value" in el) {
      const win = windowOf(el);
      const proto = el.tagName === "TEXTAREA" ? win.HTMLTextAreaElement.prototype : win.HTMLInputElement.prototype;
      const setter = Object.getOwnPropertyDescriptor(proto, "value");
      if (setter && setter.set) setter.set.call(el, "");
      else el.value = "";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    } else if (el.isContentEditable) {
      el.textContent = "";
    }
    return { status: deepActive() === el ? "ok" : "unfocusable", locator: used, keys: catcher };
  }
  case "select": {
    if (el.tagName !== "SELECT") return { status: "not_select", locator: used };
    const matches = (o, want) => o.value.toLowerCase() === want || clip(o.label || o.text, 200).toLowerCase() === want;
    if (el.multiple) {
      // Several choices at once, one per line (policy.rs `MULTIPLE_OPTIONS`): exactly those.
      const wanted = String(ARG).split("\n").map((w) => w.trim().toLowerCase()).filter((w) => w);
      const options = Array.from(el.options);
      if (wanted.some((w) => !options.some((o) => matches(o, w)))) return { status: "no_option", locator: used };
      for (const o of options) o.selected = wanted.some((w) => matches(o, w));
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      return { status: "ok", locator: used };
    }
    const want = String(ARG).trim().toLowerCase();
    const option = Array.from(el.options).find((o) => matches(o, want));
    if (!option) return { status: "no_option", locator: used };
    el.value = option.value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { status: "ok", locator: used };
  }
  case "set_value": {
    const type = (el.getAttribute("type") || "").toLowerCase();
    const value = pickerValue(type, String(ARG).trim());
    const proto = Object.getOwnPropertyDescriptor(windowOf(el).HTMLInputElement.prototype, "value");
    el.focus();
    proto.set.call(el, value);
    if (el.value === "" && value !== "") return { status: "bad_value", locator: used };
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { status: "ok", locator: used };
  }
  case "scroll": {
    // ARG "probe": where to put the wheel (the box's visible centre) and where the box stands;
    // "top" or "bottom": put it there (what dragging its scroll bar does) and say where it is.
    if (ARG === "top") el.scrollTop = 0;
    if (ARG === "bottom") el.scrollTop = el.scrollHeight;
    if (ARG === "probe") el.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
    const r = shownRect(el);
    if (!r) return { status: "hidden", locator: used };
    const offset = frameOffset(el);
    return {
      status: "ok",
      locator: used,
      x: offset.x + (r.left + r.right) / 2,
      y: offset.y + (r.top + r.bottom) / 2,
      at: scrollPosition(el),
    };
  }
  case "suggestions": {
    // ARG: {text, before}. The visible elements other than the field that hold the text as
    // whole words (any case) and sit in a list (an item, an option, a menu's entry): the
    // innermost ones, by CSS path, less the paths in `before` (what the page showed before
    // the text was typed). Asked before and after typing, what typing brought up: an
    // autocomplete's suggestions.
    const { text, before } = JSON.parse(ARG);
    const flat = (s) => s.toLowerCase().replace(/\s+/g, " ").trim();
    const want = flat(text);
    if (!want) return { status: "ok", locator: used, suggestions: [] };
    const escaped = want.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const whole = new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, "u");
    const SKIP = ["SCRIPT", "STYLE", "INPUT", "TEXTAREA", "SELECT", "OPTION", "TEMPLATE"];
    const LISTED = "li, [role=option], [role=menuitem], [role=listbox], [role=menu]";
    const holding = Array.from(document.body.querySelectorAll("*")).filter(
      (n) =>
        !SKIP.includes(n.tagName) &&
        n !== el &&
        !n.contains(el) &&
        !el.contains(n) &&
        flat(n.textContent || "").includes(want) &&
        n.closest(LISTED) &&
        whole.test(flat(textOf(n))) &&
        visible(n),
    );
    const inner = holding.filter((n) => !holding.some((o) => o !== n && n.contains(o)));
    const seen = new Set(before);
    const fresh = inner
      .map((n) => ({ path: cssPath(n), role: roleOf(n) || "clickable", name: nameOf(n) }))
      .filter((s) => !seen.has(s.path));
    return { status: "ok", locator: used, suggestions: fresh.slice(0, 50) };
  }
  case "slider": {
    // ARG "focus": focus the slider (its handle), then read; "read": read. The numbers a
    // person could watch move with it: its own (`aria-valuenow`, a range input's value) and
    // every visible number on the page standing alone (a widget's readout beside it, a
    // number field kept in step with it), by CSS path. Which of them moves is learnt by
    // pressing a key (tab.rs `slide`).
    if (ARG === "focus") {
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      el.focus();
      if (deepActive() !== el) return { status: "unfocusable", locator: used };
    }
    const NUMBER = /^[-+\u2212]?\d+(?:\.\d+)?$/;
    const number = (text) => {
      const t = String(text || "").trim();
      return NUMBER.test(t) ? Number(t.replace("\u2212", "-")) : null;
    };
    const readings = [];
    const own = el.tagName === "INPUT" ? number(el.value) : null;
    if (own !== null) readings.push({ path: "@value", number: own });
    const aria = number(el.getAttribute("aria-valuenow"));
    if (aria !== null) readings.push({ path: "@aria", number: aria });
    let looked = 0;
    for (const n of document.body.querySelectorAll("*")) {
      if (readings.length >= 200 || ++looked > 5000) break;
      if (n === el) continue;
      let found = null;
      if (n.tagName === "INPUT" && ["number", "text", ""].includes((n.getAttribute("type") || "").toLowerCase())) {
        found = number(n.value);
      } else if (n.childElementCount === 0 && !["SCRIPT", "STYLE", "TEMPLATE"].includes(n.tagName)) {
        found = number(n.textContent);
      }
      if (found !== null && visible(n)) readings.push({ path: cssPath(n), number: found });
    }
    return { status: "ok", locator: used, readings };
  }
  default:
    return { status: "bad_op" };
}
