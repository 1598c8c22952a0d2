// Helpers shared by forager's page scripts (observation and actions), pasted at the top of
// each script's body. Role and accessible-name rules follow the ARIA precedence: labelledby,
// label, then the element's own text, placeholder or title.
const clip = (s, n) => {
  s = (s || "").replace(/\s+/g, " ").trim();
  return s.length > n ? s.slice(0, n) : s;
};

// The window an element lives in: a same-origin frame's own, else ours.
const windowOf = (el) => (el.ownerDocument && el.ownerDocument.defaultView) || window;
const styleOf = (el) => windowOf(el).getComputedStyle(el);

// A same-origin frame's document, or null (a cross-origin frame's is not ours to read).
const frameDocument = (el) => {
  if (el.tagName !== "IFRAME" && el.tagName !== "FRAME") return null;
  try {
    const doc = el.contentDocument;
    return doc && doc.documentElement ? doc : null;
  } catch (e) {
    return null;
  }
};

// Every tree a person sees controls in: the document, each open shadow root and each
// same-origin frame's document, depth first (a root's own trees after it). Bounded: the
// first MAX_SCANNED elements of each root are looked at for shadow hosts, at most MAX_ROOTS
// roots, MAX_ROOT_DEPTH levels.
const MAX_ROOTS = 64;
const MAX_ROOT_DEPTH = 6;
const MAX_SCANNED = 20000;
const rootsFrom = (start) => {
  const roots = [];
  const visit = (root, depth) => {
    if (roots.length >= MAX_ROOTS || depth > MAX_ROOT_DEPTH) return;
    roots.push(root);
    let scanned = 0;
    for (const el of root.querySelectorAll("*")) {
      if (++scanned > MAX_SCANNED || roots.length >= MAX_ROOTS) break;
      if (el.shadowRoot) {
        visit(el.shadowRoot, depth + 1);
      } else if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
        const doc = frameDocument(el);
        if (doc) visit(doc, depth + 1);
      }
    }
  };
  visit(start, 0);
  return roots;
};
const ROOTS = rootsFrom(document);

// `querySelectorAll` over every root, in the order of ROOTS: what observation and actions
// both walk, so that counts (a Near locator's nth) agree.
const deepAll = (selector) => {
  if (ROOTS.length === 1) return Array.from(document.querySelectorAll(selector));
  const all = [];
  for (const root of ROOTS) for (const el of root.querySelectorAll(selector)) all.push(el);
  return all;
};

// The text a person reads: the document's, then each same-origin frame's.
const framesText = () => {
  const texts = [];
  for (const root of ROOTS) {
    if (root.nodeType === 9 && root.body) texts.push(root.body.innerText || "");
  }
  return texts.join("\n");
};

// The focused element, inside shadow roots and frames.
const deepActive = () => {
  let active = document.activeElement;
  for (let depth = 0; active && depth < MAX_ROOT_DEPTH; depth++) {
    const inner = active.shadowRoot ? active.shadowRoot.activeElement : frameDocument(active)?.activeElement;
    if (!inner || inner === active) break;
    active = inner;
  }
  return active;
};

// Where an element's frame sits in our viewport: the offsets to add to the coordinates its
// own window gives (0, 0 in the top document).
const frameOffset = (el) => {
  let x = 0, y = 0;
  let doc = el.ownerDocument;
  for (let depth = 0; doc && doc !== document && depth < MAX_ROOT_DEPTH; depth++) {
    const frame = doc.defaultView && doc.defaultView.frameElement;
    if (!frame) break;
    const r = frame.getBoundingClientRect();
    const style = styleOf(frame);
    x += r.left + frame.clientLeft + (parseFloat(style.paddingLeft) || 0);
    y += r.top + frame.clientTop + (parseFloat(style.paddingTop) || 0);
    doc = frame.ownerDocument;
  }
  return { x, y };
};

// The element a node hangs from, across a shadow root's boundary (its host).
const parentAcross = (node) => {
  if (node.parentElement) return node.parentElement;
  const root = node.getRootNode && node.getRootNode();
  return root && root.host ? root.host : null;
};

const visible = (el) => {
  if (!el.isConnected) return false;
  const rect = el.getBoundingClientRect();
  if (rect.width <= 0 || rect.height <= 0) return false;
  // Parked above or left of the document ("Skip to main content" until focused): no scroll
  // brings it under a pointer.
  const win = windowOf(el);
  if (rect.bottom + win.scrollY <= 0 || rect.right + win.scrollX <= 0) return false;
  const style = styleOf(el);
  if (style.visibility === "hidden" || style.display === "none" || style.opacity === "0") {
    return false;
  }
  return !el.closest("[aria-hidden=true],[hidden],[inert]");
};

// A field the page keeps out of sight to catch the keys typed at something beside it (a
// terminal; xterm.js's helper text area): a text field, enabled and writable, laid out
// (not display:none, not visibility:hidden) but transparent or a pixel or less in size.
// `visible` leaves it out; a terminal's commands are typed into it.
const keyCatcher = (el) => {
  if (!el || !el.isConnected || el.disabled || el.readOnly) return false;
  const type = (el.getAttribute("type") || "text").toLowerCase();
  if (!(el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && ["text", "search", ""].includes(type)))) return false;
  const style = styleOf(el);
  if (style.display === "none" || style.visibility === "hidden") return false;
  const rect = el.getBoundingClientRect();
  return style.opacity === "0" || rect.width <= 1 || rect.height <= 1;
};

// A terminal's cursor: block characters that blink (shown, hidden), which no state should see.
const CURSOR_BLOCKS = /[\u2580-\u259F]/g;

const textOf = (el) => clip(el.innerText || el.textContent || "", 160);

const labelledBy = (el) => {
  const ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
  const root = el.getRootNode();
  const byId = (id) => (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
  return clip(ids.map((id) => textOf(byId(id) || document.createElement("i"))).join(" "), 160);
};

const labelFor = (el) => {
  if (el.labels && el.labels.length) {
    return clip(Array.from(el.labels).map((l) => l.innerText || l.textContent).join(" "), 160);
  }
  return "";
};

// The text a person reads as a field's label when the page did not link one: a <label> (or a
// short text) right before the field, as in `<label>Username</label><input>`.
const looseLabel = (el) => {
  let node = el.previousSibling;
  for (let hops = 0; node && hops < 3; hops++, node = node.previousSibling) {
    if (node.nodeType === 3) {
      const t = clip(node.textContent, 60).replace(/:$/, "");
      if (t) return t;
      continue;
    }
    if (node.nodeType !== 1) continue;
    if (["INPUT", "SELECT", "TEXTAREA", "BUTTON", "BR"].includes(node.tagName)) return "";
    const t = clip(node.innerText || node.textContent || "", 60).replace(/:$/, "");
    return t.length <= 40 ? t : "";
  }
  // A form laid out as a table: the field's cell is alone, its label is the row's header
  // (`<tr><th>Genre</th><td><input></td></tr>`).
  const cell = el.parentElement;
  if (cell && cell.tagName === "TD" && cell.parentElement) {
    const header = cell.parentElement.querySelector(":scope > th");
    if (header && header.compareDocumentPosition(cell) & Node.DOCUMENT_POSITION_FOLLOWING) {
      const t = clip(header.innerText || header.textContent || "", 60).replace(/:$/, "");
      if (t.length <= 40) return t;
    }
  }
  return wrapperLabel(el);
};

// The controls a wrapper may hold for its text to label a field.
const FIELD_CONTROLS = "input:not([type=hidden]), select, textarea, button";

// A field alone in its wrappers, beside one short text: `<div class=field><div
// class=label>Genre</div><div class=input><input></div></div>`, `<div><input><span>Genre</span>
// </div>`. Climbs while the wrapper holds no other control; the first wrapper with text decides,
// and only when that text is one piece (a heading and a paragraph beside a field are no label).
const wrapperLabel = (el) => {
  let inner = el;
  for (let depth = 0; depth < 3; depth++) {
    const wrapper = inner.parentElement;
    if (!wrapper || wrapper === el.ownerDocument.body || wrapper.querySelectorAll(FIELD_CONTROLS).length !== 1) {
      return "";
    }
    const texts = [];
    for (const child of wrapper.childNodes) {
      if (child === inner) continue;
      let t = "";
      if (child.nodeType === 3) {
        t = child.textContent.trim();
      } else if (child.nodeType === 1 && !["SCRIPT", "STYLE", "TEMPLATE"].includes(child.tagName)
        && child.getClientRects().length > 0) {
        t = (child.innerText || "").trim();
      }
      if (t) texts.push(t);
    }
    if (texts.length > 1) return "";
    if (texts.length === 1) {
      const t = clip(texts[0], 60).replace(/:$/, "");
      return t.length <= 40 ? t : "";
    }
    inner = wrapper;
  }
  return "";
};

// A slider widget's handle that says nothing of its role (jQuery UI's `.ui-slider-handle`, a
// "slider-thumb"): the keyboard moves it as it moves a `role=slider`.
const SLIDER_HANDLES = "[class*=slider-handle][tabindex], [class*=slider-thumb][tabindex]";

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
    default: return el.matches(SLIDER_HANDLES) ? "slider" : "";
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
    return clip(el.getAttribute("title") || el.getAttribute("name") || "", 160) || looseLabel(el);
  }
  if (tag === "img") return clip(el.getAttribute("alt"), 160);
  const text = textOf(el);
  if (text) return text;
  const img = el.querySelector("img[alt]");
  if (img) return clip(img.getAttribute("alt"), 160);
  return clip(el.getAttribute("title"), 160) || classWords(el) || colorWord(el);
};

// The colour a nameless shape is filled with, as a word ("red", "green"): its hue, when it has
// one (grey, black and white name nothing). A swatch, a shade, a tile is told by it.
const COLOR_WORDS = [[15, "red"], [45, "orange"], [70, "yellow"], [165, "green"], [195, "cyan"], [255, "blue"], [290, "purple"], [345, "pink"], [360, "red"]];
const colorWord = (el) => {
  const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?/.exec(styleOf(el).backgroundColor || "");
  if (!m || (m[4] !== undefined && Number(m[4]) < 0.5)) return "";
  const [r, g, b] = [m[1], m[2], m[3]].map((v) => Number(v) / 255);
  const max = Math.max(r, g, b), min = Math.min(r, g, b), light = (max + min) / 2, chroma = max - min;
  const saturation = chroma === 0 ? 0 : chroma / (1 - Math.abs(2 * light - 1));
  if (saturation < 0.15 || light < 0.1 || light > 0.95) return "";
  let hue = max === r ? ((g - b) / chroma) % 6 : max === g ? (b - r) / chroma + 2 : (r - g) / chroma + 4;
  hue = (hue * 60 + 360) % 360;
  return COLOR_WORDS.find(([end]) => hue < end)[1];
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

// What an item says: its text, then what its pictures say (a dish's "vegan" icon).
const itemText = (node) => {
  const alts = Array.from(node.querySelectorAll("img[alt]"), (img) => img.getAttribute("alt").trim());
  return clip([node.innerText || "", ...alts.filter(Boolean)].join(" "), 160);
};

// The repeated item an element sits in: the nearest ancestor (a few levels up) that has a
// sibling of the same tag and class, as list rows, posts, cards and table rows do, with its
// text; null when there is none. An item that says nothing more than the element is passed
// over (a cell that holds only the control is no item yet: its row is).
const itemOf = (el) => {
  let node = el.parentElement;
  const body = el.ownerDocument.body;
  for (let depth = 0; node && node !== body && depth < 6; depth++) {
    const parent = node.parentElement;
    if (parent && parent !== body) {
      const kind = node.tagName + "." + (typeof node.className === "string" ? node.className : "");
      const alike = Array.from(parent.children).filter(
        (c) => c !== node && c.tagName + "." + (typeof c.className === "string" ? c.className : "") === kind,
      );
      if (alike.length > 0) {
        const text = itemText(node);
        if (text && text !== textOf(el)) return { node, text };
      }
    }
    node = parent;
  }
  return null;
};

// The text of the repeated item an element sits in ("" when there is none).
const recordOf = (el) => {
  const item = itemOf(el);
  return item ? item.text : "";
};

// The header of the table column whose cell holds the element ("" outside a table with a
// header row): the header row is the table's <thead>'s first row, else a first row of <th>.
const columnOf = (el) => {
  const cell = el.closest("td, th");
  const table = cell && cell.closest("table");
  if (!table || cell.parentElement.closest("thead")) return "";
  const head = table.tHead && table.tHead.rows[0]
    ? table.tHead.rows[0]
    : Array.from(table.rows).find((r) => r.cells.length && Array.from(r.cells).every((c) => c.tagName === "TH"));
  if (!head || head === cell.parentElement) return "";
  let at = 0;
  for (const c of cell.parentElement.cells) {
    if (c === cell) break;
    at += c.colSpan || 1;
  }
  let col = 0;
  for (const h of head.cells) {
    if (at < col + (h.colSpan || 1)) return clip(h.innerText || h.textContent || "", 60);
    col += h.colSpan || 1;
  }
  return "";
};

// The item an InItem locator counts in: the element's table row, else its repeated item.
const keyedItemOf = (el) => {
  const row = el.closest("tr");
  if (row && row.parentElement && row.parentElement.children.length > 1) return row;
  const item = itemOf(el);
  return item ? item.node : null;
};

// The short texts of an item that can name it (a cell's "Mombasa"): letters, no digits
// (which change between loads), 2 to 40 characters; outside `skip` (the element's own text).
const MAX_ITEM_KEYS = 12;
const itemKeys = (item, skip) => {
  const keys = [];
  const walker = item.ownerDocument.createTreeWalker(item, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node && keys.length < MAX_ITEM_KEYS; node = walker.nextNode()) {
    if (skip && skip.contains(node)) continue;
    const t = (node.textContent || "").trim().replace(/\s+/g, " ");
    if (t.length >= 2 && t.length <= 40 && /\p{L}/u.test(t) && !/[0-9]/.test(t)) keys.push(t);
  }
  return keys;
};

// The element an InItem locator names: the nth visible element with its role in the one item
// having a text that reads its key (letter case aside); null when no item or several have it.
const itemTarget = (loc) => {
  const want = loc.key.trim().toLowerCase();
  const groups = new Map();
  for (const el of deepAll(INTERACTIVE)) {
    if (!visible(el) || roleOf(el) !== loc.role) continue;
    const item = keyedItemOf(el);
    if (!item) continue;
    if (!groups.has(item)) groups.set(item, []);
    groups.get(item).push(el);
  }
  const named = [...groups.keys()].filter((item) => itemKeys(item, null).some((k) => k.toLowerCase() === want));
  if (named.length !== 1) return null;
  return groups.get(named[0])[loc.nth - 1] || null;
};

// The element a Described locator names: of the visible elements with its role, the one whose
// name holds the most of its words (a word matches a name's word that begins with it or that
// it begins with, four letters at least), at least half of them and more than any other (two
// elements of one address are one); null otherwise. See `Locator::Described`.
const describedTarget = (loc) => {
  const want = (loc.words || []).map((w) => w.toLowerCase()).filter(Boolean);
  if (!want.length) return null;
  const alike = (w, h) => w === h || (Math.min(w.length, h.length) >= 4 && (h.startsWith(w) || w.startsWith(h)));
  let best = null;
  let bestScore = 0;
  let tied = false;
  for (const el of deepAll(INTERACTIVE)) {
    if (!visible(el) || roleOf(el) !== loc.role) continue;
    const words = (nameOf(el) || "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
    const score = want.filter((w) => words.some((h) => alike(w, h))).length;
    if (score > bestScore) {
      best = el;
      bestScore = score;
      tied = false;
    } else if (score === bestScore && best && !(el.href && el.href === best.href)) {
      tied = true;
    }
  }
  if (tied || bestScore * 2 < want.length) return null;
  return best;
};

const cssEscape = (s) => (window.CSS && CSS.escape ? CSS.escape(s) : s.replace(/[^\w-]/g, "\\$&"));

// A selector that resolves to exactly this element: an id when unique and stable-looking,
// otherwise a tag:nth-of-type chain up to such an id or the body. An element inside an open
// shadow root or a same-origin frame: its host's (its frame's) path, DEEP, then its path
// inside, from the top of the shadow root (no id there: see resolveCss) or the frame's body.
const DEEP = " >>> ";
const cssPath = (el) => {
  const root = el.getRootNode();
  const shadow = root && root.nodeType === 11 && root.host ? root : null;
  const doc = el.ownerDocument;
  const frame = !shadow && doc !== document && doc.defaultView ? doc.defaultView.frameElement : null;
  const prefix = shadow ? cssPath(shadow.host) + DEEP : frame ? cssPath(frame) + DEEP : "";
  const parts = [];
  let node = el;
  while (node && node.nodeType === 1 && node !== doc.body && node !== doc.documentElement) {
    const id = node.getAttribute("id");
    if (!shadow && id && !/\d{3,}|^[0-9a-f-]{16,}$/i.test(id) && doc.querySelectorAll("#" + cssEscape(id)).length === 1) {
      parts.unshift("#" + cssEscape(id));
      return prefix + parts.join(" > ");
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
  if (!shadow) parts.unshift("body");
  return prefix + parts.join(" > ");
};

// The elements a CSS path (cssPath's, or a person's selector) names. Each DEEP step enters the
// shadow roots or frame documents of what the path so far found. In a shadow root a step's
// chain counts from the root's top (a selector there would otherwise match at any depth).
const resolveCss = (path) => {
  const steps = path.split(DEEP);
  let scopes = [document];
  let found = [];
  for (let i = 0; i < steps.length; i++) {
    found = [];
    const depth = steps[i].split(" > ").length;
    for (const scope of scopes) {
      let all;
      try {
        all = scope.querySelectorAll(steps[i]);
      } catch (e) {
        return [];
      }
      for (const el of all) if (scope.nodeType !== 11 || depthIn(el) === depth) found.push(el);
    }
    scopes = found.map((el) => el.shadowRoot || frameDocument(el)).filter(Boolean);
  }
  return found;
};
const depthIn = (el) => {
  let depth = 1;
  for (let node = el.parentElement; node; node = node.parentElement) depth++;
  return depth;
};

// Fields and buttons outside any <form> that share a container (the closest ancestor, at
// most five levels up, holding both a text field and a button) form an implicit form.
const FIELD = "input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button]):not([type=reset]), textarea, select, [role=textbox], [role=spinbutton], [role=combobox]";
const BUTTON = "button, input[type=submit], input[type=button], [role=button]";
// A <div> or <span> the page listens to, with a button's few words ("Submit"), counts as one.
const buttonLike = (el) => el.matches(BUTTON) || (el.hasAttribute(LISTENS) && !el.matches(FIELD)
  && !el.querySelector(FIELD) && /^\S+(\s\S+){0,2}$/.test(textOf(el)));
const implicitForm = (el) => {
  if (!el.matches(FIELD) && !buttonLike(el)) return null;
  let node = el.parentElement;
  for (let depth = 0; node && node !== el.ownerDocument.body && depth < 5; depth++, node = node.parentElement) {
    if (!node.querySelector(FIELD)) continue;
    // Real buttons first; the page's listening elements only where there is none.
    let buttons = Array.from(node.querySelectorAll(BUTTON));
    if (!buttons.length) buttons = Array.from(node.querySelectorAll("[" + LISTENS + "]")).filter(buttonLike);
    if (buttons.length) {
      const submit = buttons.find(visible);
      return {
        name: clip(node.getAttribute("id") || node.getAttribute("aria-label") || "form", 80),
        submit_name: submit ? nameOf(submit, "button") : null,
        posts: false,
        selector: cssPath(node),
        implicit: true,
      };
    }
  }
  return null;
};

const formOf = (el) => {
  const form = el.form || el.closest("form");
  if (!form) return implicitForm(el);
  const submit = form.querySelector("button:not([type=button]):not([type=reset]), input[type=submit], input[type=image]");
  return {
    name: clip(form.getAttribute("name") || form.getAttribute("id") || form.getAttribute("aria-label") || form.getAttribute("action") || "form", 80),
    submit_name: submit ? nameOf(submit, "button") : null,
    posts: (form.getAttribute("method") || "get").toLowerCase() === "post",
    selector: cssPath(form),
    implicit: false,
  };
};

// A field of a <form> that the form does not send: no name, while other fields of the form
// (not hidden ones, not its buttons) have one. A widget's own box (a list's filter) is so.
const FIELD_TAGS = ["INPUT", "TEXTAREA", "SELECT"];
const unsentField = (el) => {
  const form = el.form;
  if (!form || el.name || !FIELD_TAGS.includes(el.tagName)) return false;
  return Array.from(form.elements).some((other) =>
    other !== el && other.name && other.type !== "hidden" && !other.matches(SUBMITS) &&
    FIELD_TAGS.includes(other.tagName));
};

// What activating an element sends, as the page declares it (`Sends` in the protocol): a
// link's http(s) `href` (not a bare fragment: that scrolls or runs a script), or the <form> a
// submit control submits, or Enter in one of its text fields: its method and action (a
// button's own formmethod/formaction first). Anything else is "unknown" (a script's handler).
const SUBMITS = "button:not([type=button]):not([type=reset]):not([type=menu]), input[type=submit], input[type=image]";
const TYPES_INTO = "input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button]):not([type=reset]):not([type=image]):not([type=file]):not([type=range]):not([type=color])";
const sendsOf = (el) => {
  if (el.tagName === "A") {
    const raw = (el.getAttribute("href") || "").trim();
    if (raw && !raw.startsWith("#") && /^https?:/i.test(el.href)) return { get: { url: el.href } };
    return "unknown";
  }
  const form = el.form || el.closest("form");
  if (!form) return "unknown";
  const submits = el.matches(SUBMITS);
  if (!submits && !el.matches(TYPES_INTO)) return "unknown";
  const method = ((submits && el.getAttribute("formmethod")) || form.getAttribute("method") || "get").toLowerCase();
  const url = submits && el.hasAttribute("formaction") ? el.formAction : form.action;
  if (!/^https?:/i.test(url || "")) return "unknown";
  if (method === "get") return { get: { url } };
  if (method === "post") return { post: { url } };
  return "unknown";
};

const INTERACTIVE = "a[href], button, input:not([type=hidden]), select, textarea, summary, " +
  "[role=button], [role=link], [role=menuitem], [role=tab], [role=checkbox], [role=radio], " +
  "[role=option], [role=switch], [role=textbox], [role=combobox], [onclick], [contenteditable=true], " +
  "[role=slider], " + SLIDER_HANDLES;


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
  for (const el of deepAll(INTERACTIVE + ", " + ANCHORS)) {
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

// The attribute init.js puts on elements the page listens to for pointer input.
const LISTENS = "data-forager-listens";

// A page-wide overlay (a modal's backdrop): not a control, even when it listens for clicks.
const isBackdrop = (el) => {
  const rect = el.getBoundingClientRect();
  const win = windowOf(el);
  return rect.width >= 0.9 * win.innerWidth && rect.height >= 0.9 * win.innerHeight;
};

// A short digest of what a field holds ("" when empty): enough to tell one typed value from
// another in a fingerprint, never the text itself. A password field says only how long its
// value is: a digest would let anyone holding a fingerprint test guesses of the password.
const heldValue = (el) => {
  let value = "";
  if (el.tagName === "SELECT") {
    value = Array.from(el.selectedOptions || []).map((o) => o.value).join("\u0000");
    // A select always holds something: only a choice other than the first option counts.
    if (el.selectedIndex <= 0 && !el.multiple) return "";
  } else if (el.tagName === "TEXTAREA") {
    value = el.value;
  } else if (el.tagName === "INPUT") {
    const type = (el.getAttribute("type") || "text").toLowerCase();
    if (["checkbox", "radio", "submit", "button", "reset", "image", "file", "hidden"].includes(type)) return "";
    if (type === "password") return el.value ? "len" + el.value.length : "";
    value = el.value;
  } else if (el.isContentEditable) {
    value = el.textContent || "";
  } else if (roleOf(el) === "slider") {
    // Where it stands: its value, or failing that its handle's place on the track.
    value = el.getAttribute("aria-valuenow") || el.style.left || el.style.bottom || el.style.transform || "";
  }
  if (!value) return "";
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    hash ^= value.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
};

// The part of an element a person can see: its box cut by every ancestor that clips its
// overflow and by the viewport (null when nothing of it shows there).
const shownRect = (el) => {
  const r = el.getBoundingClientRect();
  let left = r.left, top = r.top, right = r.right, bottom = r.bottom;
  const outer = el.ownerDocument.documentElement;
  for (let node = parentAcross(el); node && node !== outer; node = parentAcross(node)) {
    const style = styleOf(node);
    if (style.overflowX === "visible" && style.overflowY === "visible") continue;
    const c = node.getBoundingClientRect();
    left = Math.max(left, c.left); top = Math.max(top, c.top);
    right = Math.min(right, c.right); bottom = Math.min(bottom, c.bottom);
  }
  const win = windowOf(el);
  left = Math.max(left, 0); top = Math.max(top, 0);
  right = Math.min(right, win.innerWidth); bottom = Math.min(bottom, win.innerHeight);
  return right - left >= 1 && bottom - top >= 1 ? { left, top, right, bottom } : null;
};

// Whether a click at `point` (in the element's own window) lands on `el`: it is the topmost
// element there, or inside it, or a label of it. Asked of the element's own tree (its shadow
// root or its frame's document), which sees through its host.
const lands = (el, point) => {
  const root = el.getRootNode();
  const tree = root && root.elementFromPoint ? root : el.ownerDocument;
  const top = tree.elementFromPoint(point.x, point.y);
  if (!top || top === el || el.contains(top) || top.contains(el)) return true;
  const label = top.closest("label");
  return !!(label && (label.control === el || label.contains(el)));
};

// Points of a box, as fractions of its width and height, tried when its middle is covered:
// the middles of its edges (inset), then its corners.
const EDGE_POINTS = [[0.5, 0.15], [0.5, 0.85], [0.15, 0.5], [0.85, 0.5], [0.15, 0.15], [0.85, 0.15], [0.15, 0.85], [0.85, 0.85]];

// Where to click an element, and whether a click there lands on it: the middle of its shown
// part (at most 40 px in, so a wide row is clicked near its label); where another element
// covers that (a button half under another), the first point of its shown part where it is on
// top; null when nothing of it shows.
const clickPoint = (el) => {
  const r = shownRect(el);
  if (!r) return null;
  // Points in the element's own window; the answer in ours (a frame's element is offset by
  // where the frame sits).
  const offset = frameOffset(el);
  const ours = (point, hit) => ({ x: point.x + offset.x, y: point.y + offset.y, lands: hit });
  const middle = { x: r.left + Math.min((r.right - r.left) / 2, 40), y: (r.top + r.bottom) / 2 };
  if (lands(el, middle)) return ours(middle, true);
  for (const [fx, fy] of EDGE_POINTS) {
    const point = { x: r.left + (r.right - r.left) * fx, y: r.top + (r.bottom - r.top) * fy };
    if (lands(el, point)) return ours(point, true);
  }
  return ours(middle, false);
};

// Whether another element sits on top of this one wherever it would be clicked (an overlay, a
// modal): a click there would land on that element instead. An element scrolled out of sight
// is not covered: clicking scrolls it into view first.
const covered = (el) => {
  const point = clickPoint(el);
  return !!point && !point.lands;
};

// Words of an element's classes, a name of last resort for icons and shapes that have no text
// ("trash", "star"): letters only, no generated hashes.
const classWords = (el) => {
  const raw = typeof el.className === "string" ? el.className : (el.getAttribute("class") || "");
  // The class names first; an id (`send-reply`) when they say nothing; and an id with digits
  // (a board's cells: `ttt-4`), which tells the element from its like (a seeded page draws it
  // the same on every load), so that `mark x ttt 4` is one cell's state.
  const id = el.id || "";
  const numbered = /\d/.test(id) ? tokenWords(id, true) : "";
  return [tokenWords(raw, false) || tokenWords(id, false), numbered].filter(Boolean).join(" ");
};
const tokenWords = (raw, digits) => {
  const words = [];
  for (const token of raw.split(/\s+/)) {
    // A state class (`like active`) is the control's state, not its name: the name stays
    // the same when the state changes.
    if (!token || (!digits && /\d/.test(token)) || token.length > 24 || STATE_CLASSES.includes(token)) continue;
    let after = false; // a short word counts after a long one: `mark-x`, `mark-o`
    for (const w of token.replace(/([a-z])([A-Z])/g, "$1 $2").split(/[-_\s]+/)) {
      const word = w.toLowerCase();
      const keep = w.length >= 3 || (after && w.length > 0) || (digits && /^\d+$/.test(w));
      if (keep && !words.includes(word)) words.push(word);
      after = w.length >= 3;
    }
  }
  return words.slice(0, 4).join(" ");
};

// Where a scrolling box stands: "top", "bottom" or "middle" (within 4 px of an end counts as
// at it).
const scrollPosition = (el) => {
  if (el.scrollTop <= 4) return "top";
  if (el.scrollTop + el.clientHeight >= el.scrollHeight - 4) return "bottom";
  return "middle";
};

// A box of text that scrolls: a text area or an element whose overflow scrolls, with more to
// show than it does, and no control inside (a box of controls is scrolled by reaching its
// controls; see observe.js).
const isTextScroller = (el) => {
  if (el.scrollHeight <= el.clientHeight + 8 || el.clientHeight < 16) return false;
  if (el.tagName !== "TEXTAREA") {
    const overflow = styleOf(el).overflowY;
    if (overflow !== "auto" && overflow !== "scroll") return false;
    if (el.querySelector(INTERACTIVE + ", [" + LISTENS + "]")) return false;
  }
  return visible(el);
};

// Whether an element shows a toggled state by its class alone (`<button class="odd
// selected">`, a post's `like active`): the web's common idiom for a choice that is no form
// control.
const STATE_CLASSES = ["selected", "active", "checked", "pressed", "is-selected", "is-active", "is-checked"];
const classState = (el) => !!el.classList && STATE_CLASSES.some((c) => el.classList.contains(c));

// Where a page's application lives, apart from what the page put beside it: the body's child
// that holds all of `elements` (the page's controls), or the body when they spread over
// several of its children or there are none.
const applicationOf = (elements) => {
  if (elements.length === 0) return document.body;
  let root = elements[0];
  while (root.parentElement && root.parentElement !== document.body) root = root.parentElement;
  return root.parentElement === document.body && elements.every((el) => root.contains(el)) ? root : document.body;
};

// A 64-bit digest of a text (two FNV-1a passes with different offsets) written in letters
// only: a digest in hex would read as a nonce to the fingerprint's normaliser.
const letterDigest = (text) => {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x0100019d) >>> 0;
  }
  const letters = (n) => {
    let out = "";
    for (let k = 0; k < 7; k++) { out += String.fromCharCode(97 + (n % 26)); n = Math.floor(n / 26); }
    return out;
  };
  return letters(a) + letters(b);
};
