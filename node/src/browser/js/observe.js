// forager's observation of a page, evaluated in an isolated world (the page's scripts cannot
// reach our functions; the DOM is shared). Returns one JSON object. Bounded: at most
// MAX_ELEMENTS elements and TIME_BUDGET_MS of walking, so a 50,000-element DOM stays cheap.
  const MAX_ELEMENTS = 400;
  const MAX_SNAPSHOT = 1500;
  const TIME_BUDGET_MS = 400;
  // A value is kept whole up to here: "the last word" of a 150-word text area is past 500
  // characters (MiniWoB++'s scroll-text typed a word cut in half).
  const VALUE_MAX_CHARS = 2000;
  const started = performance.now();
  const elements = [];
  // The DOM elements behind `elements`, in order, kept where tab.rs finds them to ask
  // Chromium's accessibility tree for their roles and names (OBSERVED).
  const described = [];
  window[Symbol.for("forager.observed")] = described;
  const seen = new Set();
  let truncated = false;

  // Says it opens a menu (aria-haspopup), or is a list item's control beside a nested list
  // that is hidden (a dropdown that CSS shows on hover).
  const opensPopup = (el) => {
    const says = (el.getAttribute("aria-haspopup") || "").toLowerCase();
    if (says && says !== "false") return true;
    const item = el.closest("li");
    if (!item || item.contains(el) === false) return false;
    const nested = item.querySelector(":scope > ul, :scope > ol, :scope > [role=menu]");
    return !!nested && !nested.contains(el) && !visible(nested);
  };

  const describe = (el, role, near) => {
    const name = nameOf(el, role);
    const type = (el.getAttribute("type") || "").toLowerCase();
    const locators = [{ Css: cssPath(el) }];
    if (role && name) locators.push({ Role: { role, name } });
    const text = textOf(el);
    if (text && text.length <= 80) locators.push({ Text: text });
    if (near) locators.push({ Near: near });
    let options = [];
    if (el.tagName === "SELECT") {
      options = Array.from(el.options).slice(0, 50).map((o) => ({ value: o.value, label: clip(o.label || o.text, 80) }));
    }
    return {
      role: role || "clickable",
      name,
      text,
      nearby_text: nearbyOf(el),
      record: recordOf(el),
      column: columnOf(el),
      tag: el.tagName.toLowerCase(),
      input_type: el.tagName === "INPUT" ? type || "text" : "",
      href: el.tagName === "A" && el.href ? el.href : null,
      locators,
      form: formOf(el),
      required: !!el.required,
      disabled: !!el.disabled || el.getAttribute("aria-disabled") === "true",
      options,
      checked: !!el.checked || el.getAttribute("aria-checked") === "true" || (el.tagName === "SELECT" && el.selectedIndex > 0) || classState(el),
      popup: opensPopup(el),
      readonly: (el.tagName === "INPUT" || el.tagName === "TEXTAREA") && (el.readOnly || el.getAttribute("aria-readonly") === "true"),
      sends: sendsOf(el),
      autocomplete: clip((el.getAttribute("autocomplete") || "").toLowerCase(), 40),
      unsent: unsentField(el),
    };
  };

  // Controls and stable neighbours in one walk in document order: each control also gets a
  // Near locator (the nth visible control of its role after the first anchor with the text of
  // the closest anchor before it), counted exactly as act.js's nearTarget counts.
  const roleCount = new Map();
  const anchorCounts = new Map(); // anchor text → role counts at its first occurrence
  let nearest = "";
  for (const el of deepAll(INTERACTIVE + ", " + ANCHORS)) {
    if (elements.length >= MAX_ELEMENTS || performance.now() - started > TIME_BUDGET_MS) {
      truncated = true;
      break;
    }
    if (el.matches(INTERACTIVE) && !seen.has(el) && visible(el)) {
      seen.add(el);
      const role = roleOf(el);
      const before = roleCount.get(role) || 0;
      roleCount.set(role, before + 1);
      let near = null;
      if (role && nearest) {
        const at = anchorCounts.get(nearest);
        near = { anchor: nearest, role, nth: before - (at.get(role) || 0) + 1 };
      }
      // Counted (the Near walk counts it too) but not proposed: a click would hit the overlay.
      if (!covered(el)) {
        elements.push(describe(el, role, near));
        described.push(el);
      }
    }
    if (el.matches(ANCHORS)) {
      const text = anchorText(el);
      if (text) {
        nearest = text;
        if (!anchorCounts.has(text)) anchorCounts.set(text, new Map(roleCount));
      }
    }
  }
  // Terminals: a key catcher (prelude.js) beside a transcript whose last line is a prompt
  // ("user$", "~ %", ">>>"), the transcript being the nearest visible sibling with text of the
  // catcher or of one of its three closest ancestors. The transcript's box is no control of
  // its own (a click there only focuses the catcher) and its text is left out of the page's
  // prose: what a terminal shows is read as its commands and what they printed.
  const terminals = [];
  const screens = [];
  const transcriptBoxOf = (field) => {
    let node = field;
    for (let depth = 0; depth < 3 && node && node !== document.body; depth++) {
      for (const step of ["previousElementSibling", "nextElementSibling"]) {
        for (let sibling = node[step]; sibling; sibling = sibling[step]) {
          // A transcript holds text only: a box with controls in it is a page's, not a shell's.
          if (visible(sibling) && (sibling.innerText || "").trim()) {
            return sibling.querySelector(INTERACTIVE) ? null : sibling;
          }
        }
      }
      node = node.parentElement;
    }
    return null;
  };
  const transcriptOf = (box) => (box.innerText || "").replace(CURSOR_BLOCKS, "");
  for (const field of deepAll("input, textarea")) {
    if (terminals.length >= 2 || performance.now() - started > TIME_BUDGET_MS) break;
    if (!keyCatcher(field)) continue;
    const box = transcriptBoxOf(field);
    if (!box) continue;
    const lines = transcriptOf(box).split("\n").map((l) => l.replace(/\s+/g, " ").trim()).filter(Boolean);
    if (lines.length === 0 || !/^.{0,40}[$#>%]$/.test(lines[lines.length - 1])) continue;
    screens.push(box);
    terminals.push({
      name: nameOf(field, "textbox") || clip(lines[0], 80),
      locators: [{ Css: cssPath(field) }],
      transcript: lines.slice(-60).map((l) => clip(l, 200)),
    });
  }

  // Clickable elements that are not semantic controls: a pointer cursor (not inherited from
  // a pointer parent) or the page's own pointer listeners (marked by init.js), no interactive
  // ancestor. SVG shapes count: they are clicked like anything else.
  const clickables = [];
  if (!truncated) {
    const candidates = deepAll("div, span, li, td, img, label, p, i, b, em, strong, svg, svg *, [" + LISTENS + "]");
    const CONTROLS = INTERACTIVE + ", [" + LISTENS + "]";
    let checked = 0;
    for (const el of candidates) {
      if (elements.length >= MAX_ELEMENTS || checked++ > 3000 || performance.now() - started > TIME_BUDGET_MS) break;
      if (seen.has(el) || el === el.ownerDocument.body || el === el.ownerDocument.documentElement) continue;
      if (screens.some((box) => box.contains(el))) continue;
      if (el.parentElement && el.parentElement.closest(INTERACTIVE)) continue;
      if (el.matches(INTERACTIVE)) continue;
      // A slider's track: a click there jumps the handle to wherever it lands; the slide
      // action moves it to a value.
      if (el.querySelector("[role=slider], " + SLIDER_HANDLES)) continue;
      const listens = el.hasAttribute(LISTENS);
      let inner = null; // the controls inside, read once and only when needed
      if (!listens) {
        if (styleOf(el).cursor !== "pointer") continue;
        const parent = el.parentElement;
        if (parent && styleOf(parent).cursor === "pointer") continue;
        if (!textOf(el)) continue;
        // A wrapper around two or more controls is a group, not a control of its own: its
        // pointer cursor is often only `:hover` styling left by the last click.
        inner = el.querySelectorAll(CONTROLS);
        if (inner.length >= 2) continue;
      }
      // A box around a control that says what the control says (a menu's listening <li>
      // around its role=menuitem <div>) is that control: a second click on it only repeats.
      // (A few inner controls at most: a bigger box is a group, and reading each text costs.)
      inner = inner || el.querySelectorAll(CONTROLS);
      if (inner.length > 0 && inner.length <= 3) {
        const text = textOf(el);
        if (text && Array.from(inner).some((i) => textOf(i) === text)) continue;
      }
      if (!visible(el) || isBackdrop(el)) continue;
      seen.add(el);
      clickables.push(el);
      if (!covered(el)) {
        elements.push(describe(el, "", null));
        described.push(el);
      }
    }
  }

  // Controls in repeated items get an InItem locator: the item's first short text (not the
  // control's own) that no other item has, and the control's place among its item's controls
  // of its role. "The link in Mombasa's row" is what a remembered workflow turns into "the
  // link in Hamburg's row" when only the row's name came from the goal.
  {
    const entries = [];
    const keysOf = new Map(); // item → all its keys
    const peersOf = new Map(); // item → role → its controls of that role
    for (let i = 0; i < described.length; i++) {
      if (performance.now() - started > 2 * TIME_BUDGET_MS) break;
      const el = described[i];
      const role = roleOf(el);
      if (!role) continue;
      const item = keyedItemOf(el);
      if (!item) continue;
      if (!keysOf.has(item)) keysOf.set(item, itemKeys(item, null));
      const own = itemKeys(item, el);
      if (own.length === 0) continue;
      // The item's controls of this role, read once per item and role (a layout table's
      // one row can hold the whole page).
      let byRole = peersOf.get(item);
      if (!byRole) peersOf.set(item, (byRole = new Map()));
      if (!byRole.has(role)) {
        byRole.set(role, Array.from(item.querySelectorAll(INTERACTIVE)).filter((e) => roleOf(e) === role && visible(e)));
      }
      const nth = byRole.get(role).indexOf(el) + 1;
      if (nth > 0) entries.push({ i, own, role, nth });
    }
    const items = new Map(); // key (lower case) → how many items have it
    for (const keys of keysOf.values()) {
      for (const k of new Set(keys.map((k) => k.toLowerCase()))) items.set(k, (items.get(k) || 0) + 1);
    }
    for (const { i, own, role, nth } of entries) {
      const key = own.find((k) => items.get(k.toLowerCase()) === 1);
      if (key) elements[i].locators.push({ InItem: { key, role, nth } });
    }
  }

  // Boxes of text that scroll (a text area, an agreement in a scrolling panel): what a scroll
  // action can act on, and where each stands, which is part of the state (a page may check
  // what was read). Boxes of controls are left out: clicking a control scrolls to it, and
  // their position would only split states.
  const scrollables = [];
  {
    let checked = 0;
    for (const el of deepAll("textarea, div, section, article, pre, p, ul, ol, main, aside, table")) {
      if (scrollables.length >= 8 || checked++ > 3000 || performance.now() - started > 2 * TIME_BUDGET_MS) break;
      if (el.scrollHeight <= el.clientHeight + 8 || !isTextScroller(el)) continue;
      const role = roleOf(el);
      const name = (el.tagName === "TEXTAREA" ? nameOf(el, role) : clip(el.getAttribute("aria-label"), 160))
        || classWords(el) || nearbyOf(el) || "scrolling text";
      const locators = [{ Css: cssPath(el) }];
      if (role && name) locators.push({ Role: { role, name } });
      scrollables.push({ name, role: role || "region", locators, at: scrollPosition(el) });
    }
  }

  // The snapshot: one line per element with a role, states but not values.
  // Also the non-semantic clickables: a control that appears is a new state even when it is a
  // <span>. And the states a control shows (checked, selected, expanded, pressed, a value the
  // field holds: as a digest, never the text), since a click or a fill that changes only
  // those has still changed the page.
  const snapshot = [];
  const snapshotted = deepAll(INTERACTIVE + ", h1, h2, h3, h4, h5, h6, [role=alert], [role=status], [role=heading], img[alt], [aria-invalid=true]");
  for (const el of snapshotted.concat(clickables)) {
    if (snapshot.length >= MAX_SNAPSHOT || performance.now() - started > 2 * TIME_BUDGET_MS) break;
    if (!visible(el)) continue;
    const role = roleOf(el) || (el.getAttribute("onclick") || clickables.includes(el) ? "clickable" : "");
    if (!role) continue;
    let line = `${role} ${JSON.stringify(clip(nameOf(el, role), 120))}`;
    if (role === "heading") line += ` level=${el.getAttribute("aria-level") || el.tagName.slice(1)}`;
    if (el.required) line += " required";
    if (el.disabled) line += " disabled";
    if (el.checked) line += " checked";
    else if (classState(el)) line += " on";
    for (const state of ["selected", "expanded", "pressed"]) {
      if (el.getAttribute("aria-" + state) === "true") line += " " + state;
    }
    const held = heldValue(el);
    if (held) line += " filled=" + held;
    if (el.getAttribute("aria-invalid") === "true" || (el.matches && el.matches(":user-invalid"))) line += " invalid";
    if (["alert", "status"].includes(role)) line = `${role} ${JSON.stringify(clip(el.innerText, 160))}`;
    snapshot.push(line);
  }

  // Titles of widgets that are not headings (a calendar's "March 2016", a dialog's title, a
  // table's caption, a live region): stepping a calendar changes only them, and without them
  // March and May look alike. Digits masked, so a counter or a clock in one is no new state.
  {
    let titles = 0;
    for (const el of deepAll("caption, legend, output, [aria-live]:not([aria-live=off]), [class*=title i]")) {
      if (titles >= 20 || snapshot.length >= MAX_SNAPSHOT) break;
      if (el.tagName === "TITLE" || el.matches(INTERACTIVE) || el.closest(INTERACTIVE) || el.querySelector(INTERACTIVE)) continue;
      const text = clip(el.innerText || "", 80).replace(/[0-9]+/g, "#");
      if (!text || !visible(el)) continue;
      snapshot.push(`title ${JSON.stringify(text)}`);
      titles += 1;
    }
  }
  for (const box of scrollables) {
    if (snapshot.length >= MAX_SNAPSHOT) break;
    snapshot.push(`scroll ${JSON.stringify(clip(box.name, 120))} at=${box.at}`);
  }
  // A terminal's state is the set of lines it has shown (digits masked as in titles): a
  // command run again that prints what it printed before is no new state.
  for (const terminal of terminals) {
    if (snapshot.length >= MAX_SNAPSHOT) break;
    const lines = Array.from(new Set(terminal.transcript.map((l) => l.replace(/[0-9]+/g, "#")))).sort();
    snapshot.push(`terminal ${JSON.stringify(clip(terminal.name, 120))} ${letterDigest(lines.join("\n"))}`);
  }

  // The page's visible prose, as one digest line: two pages that offer the same controls but
  // show different content (one email open or another, one article or another in a
  // single-page app) are different states, not transpositions of each other. Only the text
  // of the application (`applicationOf`): a scoreboard, a clock or a status panel the page put
  // beside it changes without any action and would make a replayed state differ from the
  // recorded one. Digits masked as in titles (a counter is no new state); letters only, so the
  // fingerprint's masking of hex nonces leaves the digest alone.
  if (document.body && snapshot.length < MAX_SNAPSHOT) {
    const root = applicationOf(Array.from(seen));
    let prose = (root.innerText || "").replace(CURSOR_BLOCKS, "");
    for (const box of screens) prose = prose.replace(transcriptOf(box), "");
    prose = prose.slice(0, 20000).replace(/[0-9]+/g, "#").replace(/\s+/g, " ").trim();
    if (prose) snapshot.push(`text ${letterDigest(prose)}`);
  }

  const forms = Array.from(document.forms).slice(0, 50).map((f) =>
    clip(f.getAttribute("name") || f.getAttribute("id") || f.getAttribute("action") || "form", 80));

  const validation = [];
  for (const el of deepAll("[aria-invalid=true], [role=alert], .error, .errors, .invalid-feedback, .field-error")) {
    if (validation.length >= 20) break;
    if (!visible(el)) continue;
    const t = clip(el.innerText || el.getAttribute("aria-label") || "", 160);
    if (t) validation.push(t);
  }

  // Values a fill may copy: two-cell table rows and terms with definitions, what fields hold
  // (never a password), paragraphs. Bounded.
  const values = [];
  const addValue = (label, value, kind, changed) => {
    label = clip(label, 80);
    // What a field holds is kept as it is (spaces too): a copy must be exact.
    value = kind === "field" ? value.slice(0, VALUE_MAX_CHARS) : clip(value, VALUE_MAX_CHARS);
    if (value && values.length < 60) values.push({ label, value, kind, changed: Boolean(changed) });
  };
  for (const row of deepAll("tr")) {
    if (values.length >= 30) break;
    const cells = Array.from(row.children).filter((c) => c.tagName === "TD" || c.tagName === "TH");
    if (cells.length === 2 && visible(row)) addValue(cells[0].innerText, cells[1].innerText, "pair");
  }
  for (const term of deepAll("dt")) {
    if (values.length >= 40) break;
    const definition = term.nextElementSibling;
    if (definition && definition.tagName === "DD" && visible(term)) addValue(term.innerText, definition.innerText, "pair");
  }
  for (const field of deepAll("textarea, input:not([type=hidden]):not([type=password])")) {
    if (values.length >= 50) break;
    if (!field.value || !visible(field) || ["checkbox", "radio", "submit", "button", "reset", "image", "file"].includes(field.type)) continue;
    addValue(nameOf(field), field.value, "field", field.value !== field.defaultValue);
  }
  // What each list holds: the chosen option's label, and whether it is the one the page
  // served (a form changed but not sent shows another).
  for (const list of deepAll("select")) {
    if (values.length >= 55) break;
    if (!visible(list) || list.multiple) continue;
    const option = list.options[list.selectedIndex];
    if (!option) continue;
    const label = clip(nameOf(list), 80);
    const value = clip(option.textContent || option.label || "", VALUE_MAX_CHARS);
    if (value) values.push({ label, value, kind: "choice", changed: !option.defaultSelected && Array.from(list.options).some((o) => o.defaultSelected) });
  }
  for (const p of deepAll("p")) {
    if (values.length >= 60) break;
    if (visible(p) && !p.querySelector("input, textarea, select, button")) addValue("", p.innerText, "paragraph");
  }
  // A short block of text that is no <p>: a <div> holding text and inline elements only (a
  // captcha's letters, each in its own span). Bounded: the first 400 divs.
  const inline = new Set(["SPAN", "B", "I", "EM", "STRONG", "SMALL", "FONT", "SUB", "SUP", "CODE", "MARK", "BR"]);
  let divs = 0;
  for (const div of deepAll("div")) {
    if (values.length >= 60 || ++divs > 400) break;
    if (!Array.from(div.children).every((c) => inline.has(c.tagName))) continue;
    const text = div.textContent.trim();
    if (!text || text.length > 200 || div.closest("p, button, a, label, [role=button]") || !visible(div)) continue;
    addValue("", div.innerText, "paragraph");
  }

  // The page's tables of records: a header row and the rows under it, each cell's text
  // (bounded: 4 tables, 16 columns, 60 rows, 80 characters a cell). What tells whether every
  // listed row satisfies a goal's conditions ("every country shown is in Asia").
  const tables = [];
  for (const table of deepAll("table")) {
    if (tables.length >= 4) break;
    if (!visible(table)) continue;
    const rows = Array.from(table.rows);
    const head = table.tHead && table.tHead.rows[0]
      ? table.tHead.rows[0]
      : rows.find((r) => r.cells.length > 1 && Array.from(r.cells).every((c) => c.tagName === "TH"));
    if (!head || head.cells.length < 2) continue;
    const headers = Array.from(head.cells).slice(0, 16).map((c) => clip(c.innerText || c.textContent || "", 80));
    const body = [];
    for (const row of rows) {
      if (row === head || row.parentElement === table.tHead || body.length >= 60) continue;
      if (row.cells.length !== head.cells.length || !visible(row)) continue;
      body.push(Array.from(row.cells).slice(0, 16).map((c) => clip(c.innerText || c.textContent || "", 80)));
    }
    tables.push({ headers, rows: body });
  }

  // How many shown elements carry each word of a class ("addition-block" → block): what a
  // goal that asks for a number of things ("the total number of blocks") counts. Bounded:
  // the first 3000 elements, the 20 commonest words.
  const kinds = new Map();
  let looked = 0;
  for (const el of document.body ? document.body.getElementsByTagName("*") : []) {
    if (++looked > 3000) break;
    const raw = typeof el.className === "string" ? el.className : "";
    if (!raw || !visible(el)) continue;
    const words = new Set(raw.toLowerCase().split(/[^a-z]+/).filter((w) => w.length >= 3));
    for (const word of words) kinds.set(word, (kinds.get(word) || 0) + 1);
  }
  for (const [word, count] of Array.from(kinds).sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    values.push({ label: word, value: String(count), kind: "count" });
  }

  // A random name given to the document on its first look (kept in this world, which the
  // document's own scripts cannot reach): what the accessibility readings are kept under.
  const documentName = () => {
    const key = Symbol.for("forager.document");
    if (!window[key]) {
      const bytes = new Uint8Array(8);
      crypto.getRandomValues(bytes);
      window[key] = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    }
    return window[key];
  };
  const nav = performance.getEntriesByType("navigation")[0];
  return {
    url: location.href,
    title: clip(document.title, 200),
    http_status: nav && nav.responseStatus ? nav.responseStatus : null,
    ready_state: document.readyState,
    elements,
    text_excerpt: clip(framesText(), 2000),
    snapshot,
    forms,
    validation_errors: validation,
    values,
    tables,
    scrollables,
    terminals,
    truncated,
    node_count: document.getElementsByTagName("*").length,
    document: documentName(),
  };
