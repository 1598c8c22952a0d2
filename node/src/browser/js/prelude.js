// Helpers shared by forager's page scripts (observation and actions), pasted at the top of
// each script's body. Role and accessible-name rules follow the ARIA precedence: labelledby,
// label, then the element's own text, placeholder or title.
const clip = (s, n) => {
  s = (s || "").replace(/\s+/g, " ").trim();
  return s.length > n ? s.slice(0, n) : s;
};

const visible = (el) => {
  if (!el.isConnected) return false;
  const rect = el.getBoundingClientRect();
  if (rect.width <= 0 || rect.height <= 0) return false;
  const style = getComputedStyle(el);
  if (style.visibility === "hidden" || style.display === "none" || style.opacity === "0") {
    return false;
  }
  return !el.closest("[aria-hidden=true],[hidden],[inert]");
};

const textOf = (el) => clip(el.innerText || el.textContent || "", 160);

const labelledBy = (el) => {
  const ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
  return clip(ids.map((id) => textOf(document.getElementById(id) || document.createElement("i"))).join(" "), 160);
};

const labelFor = (el) => {
  if (el.labels && el.labels.length) {
    return clip(Array.from(el.labels).map((l) => l.innerText || l.textContent).join(" "), 160);
  }
  return "";
};

const implicitRole = (el) => {
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute("type") || "").toLowerCase();
  switch (tag) {
    case "a": return el.hasAttribute("href") ? "link" : "";
    case "button": return "button";
    case "select": return el.multiple ? "listbox" : "combobox";
    case "textarea": return "textbox";
    case "summary": return "button";
    case "input":
      if (["submit", "button", "reset", "image"].includes(type)) return "button";
      if (type === "checkbox") return "checkbox";
      if (type === "radio") return "radio";
      if (type === "search") return "searchbox";
      if (type === "range") return "slider";
      if (type === "hidden") return "";
      return "textbox";
    case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
    case "img": return el.getAttribute("alt") ? "img" : "";
    default: return "";
  }
};

const roleOf = (el) => (el.getAttribute("role") || "").split(/\s+/)[0] || implicitRole(el);

// The accessible name, by the usual precedence; inputs fall back to placeholder and title.
const nameOf = (el, role) => {
  const by = labelledBy(el);
  if (by) return by;
  const aria = clip(el.getAttribute("aria-label"), 160);
  if (aria) return aria;
  const tag = el.tagName.toLowerCase();
  if (["input", "select", "textarea"].includes(tag)) {
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (["submit", "button", "reset"].includes(type)) {
      return clip(el.value || (type === "submit" ? "Submit" : ""), 160);
    }
    const label = labelFor(el);
    if (label) return label;
    const placeholder = clip(el.getAttribute("placeholder"), 160);
    if (placeholder) return placeholder;
    return clip(el.getAttribute("title") || el.getAttribute("name") || "", 160);
  }
  if (tag === "img") return clip(el.getAttribute("alt"), 160);
  const text = textOf(el);
  if (text) return text;
  const img = el.querySelector("img[alt]");
  if (img) return clip(img.getAttribute("alt"), 160);
  return clip(el.getAttribute("title"), 160);
};

// Text near an element: its fieldset legend, the closest preceding heading or label-like text.
const nearbyOf = (el) => {
  const legend = el.closest("fieldset")?.querySelector("legend");
  if (legend) return clip(legend.innerText, 80);
  let node = el;
  for (let depth = 0; node && depth < 4; depth++) {
    let sib = node.previousElementSibling;
    for (let hops = 0; sib && hops < 3; hops++) {
      const t = clip(sib.innerText || "", 80);
      if (t) return t;
      sib = sib.previousElementSibling;
    }
    node = node.parentElement;
  }
  return "";
};

const cssEscape = (s) => (window.CSS && CSS.escape ? CSS.escape(s) : s.replace(/[^\w-]/g, "\\$&"));

// A selector that resolves to exactly this element: an id when unique and stable-looking,
// otherwise a tag:nth-of-type chain up to such an id or the body.
const cssPath = (el) => {
  const parts = [];
  let node = el;
  while (node && node.nodeType === 1 && node !== document.body && node !== document.documentElement) {
    const id = node.getAttribute("id");
    if (id && !/\d{3,}|^[0-9a-f-]{16,}$/i.test(id) && document.querySelectorAll("#" + cssEscape(id)).length === 1) {
      parts.unshift("#" + cssEscape(id));
      return parts.join(" > ");
    }
    const tag = node.tagName.toLowerCase();
    let index = 1;
    let sib = node.previousElementSibling;
    while (sib) {
      if (sib.tagName === node.tagName) index++;
      sib = sib.previousElementSibling;
    }
    parts.unshift(`${tag}:nth-of-type(${index})`);
    node = node.parentElement;
  }
  parts.unshift("body");
  return parts.join(" > ");
};

const formOf = (el) => {
  const form = el.form || el.closest("form");
  if (!form) return null;
  const submit = form.querySelector("button:not([type=button]):not([type=reset]), input[type=submit], input[type=image]");
  return {
    name: clip(form.getAttribute("name") || form.getAttribute("id") || form.getAttribute("aria-label") || form.getAttribute("action") || "form", 80),
    submit_name: submit ? nameOf(submit, "button") : null,
    posts: (form.getAttribute("method") || "get").toLowerCase() === "post",
    selector: cssPath(form),
  };
};

const INTERACTIVE = "a[href], button, input:not([type=hidden]), select, textarea, summary, " +
  "[role=button], [role=link], [role=menuitem], [role=tab], [role=checkbox], [role=radio], " +
  "[role=option], [role=switch], [role=textbox], [role=combobox], [onclick], [contenteditable=true]";


// Stable neighbours for relative locators: headings, labels, legends, table headers, terms.
const ANCHORS = "h1, h2, h3, h4, h5, h6, [role=heading], legend, label, th, dt, caption";

// An anchor's text, or "" when it is no good as an anchor (empty, long, or holding numbers,
// which change between loads).
const anchorText = (el) => {
  const t = clip(el.innerText || el.textContent || "", 80);
  return t.length >= 2 && t.length < 80 && !/[0-9]/.test(t) && visible(el) ? t : "";
};

// The element a Near locator names: the nth visible element with its role after the first
// anchor with its text, in document order (the same walk observe.js counts with).
const nearTarget = (near) => {
  let after = false;
  let count = 0;
  for (const el of document.querySelectorAll(INTERACTIVE + ", " + ANCHORS)) {
    if (!after) {
      if (el.matches(ANCHORS) && anchorText(el) === near.anchor) after = true;
      continue;
    }
    if (!el.matches(INTERACTIVE) || !visible(el) || roleOf(el) !== near.role) continue;
    count += 1;
    if (count === near.nth) return el;
  }
  return null;
};
