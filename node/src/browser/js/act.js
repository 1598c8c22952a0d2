// forager's action helpers, evaluated in an isolated world with OP, LOCATORS, EXPECT (the
// target's role and accessible name) and ARG defined before this body. Resolves the target along
// its locator chain (CSS, role + name, text, position relative to a stable neighbour) and
// reports which locator matched, so a healed step can be recorded. A CSS path that finds an
// element of another name (the page was reordered) does not count as found; if no locator finds
// the element, that element is used as the last resort.
const norm = (s) => clip(s, 200).toLowerCase().replace(/[0-9]+/g, "#");
const wantName = norm(EXPECT.name);
const findBy = (locator) => {
  if (locator.Css !== undefined) {
    let all;
    try {
      all = document.querySelectorAll(locator.Css);
    } catch (e) {
      return null;
    }
    return Array.from(all).find(visible) || all[0] || null;
  }
  if (locator.Near !== undefined) return nearTarget(locator.Near);
  const pool = Array.from(document.querySelectorAll(INTERACTIVE + ", div, span, li, td, label"));
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
if (!el && lastResort) {
  el = lastResort.el;
  used = lastResort.index;
}
if (!el) return { status: "missing" };
if (!visible(el)) return { status: "hidden", locator: used };
if (el.disabled) return { status: "disabled", locator: used };

switch (OP) {
  case "point": {
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    const rect = el.getBoundingClientRect();
    const x = rect.left + Math.min(rect.width / 2, 40);
    const y = rect.top + rect.height / 2;
    const top = document.elementFromPoint(x, y);
    if (top && top !== el && !el.contains(top) && !top.contains(el)) {
      const label = top.closest("label");
      if (!(label && (label.control === el || label.contains(el)))) {
        return { status: "covered", locator: used, covered_by: clip(top.tagName + " " + (top.id ? "#" + top.id : "") + " " + textOf(top), 80) };
      }
    }
    return { status: "ok", locator: used, x, y };
  }
  case "focus_clear": {
    el.scrollIntoView({ block: "center", behavior: "instant" });
    el.focus();
    if ("value" in el) {
      const proto = el.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
      const setter = Object.getOwnPropertyDescriptor(proto, "value");
      if (setter && setter.set) setter.set.call(el, "");
      else el.value = "";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    } else if (el.isContentEditable) {
      el.textContent = "";
    }
    return { status: document.activeElement === el ? "ok" : "unfocusable", locator: used };
  }
  case "select": {
    if (el.tagName !== "SELECT") return { status: "not_select", locator: used };
    const want = String(ARG).trim().toLowerCase();
    const option = Array.from(el.options).find((o) => o.value.toLowerCase() === want || clip(o.label || o.text, 200).toLowerCase() === want);
    if (!option) return { status: "no_option", locator: used };
    el.value = option.value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { status: "ok", locator: used };
  }
  default:
    return { status: "bad_op" };
}
