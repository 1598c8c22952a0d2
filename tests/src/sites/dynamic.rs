//! The dynamic fixture: pages that build their content in script, one per pattern of the
//! MiniWoB++ benchmark (widgets, menus, script state, pointer moves, composite forms, item
//! lists, text), each in a small fixed box; each sets `window.REWARD = 1` when its task is done and
//! `window.FAILED = true` when a wrong move ended it.

use super::{Counters, page};
use axum::Router;
use axum::extract::Query;
use axum::http::header;
use axum::response::{Html, Redirect};
use axum::routing::get;
use std::collections::HashMap;
use std::sync::Arc;

/// The dishes of `/dishes`: a name, and the words of its icons.
pub(super) const MENU_DISHES: [(&str, &str); 6] = [
    ("Caesar Salad", "vegan gluten-free"),
    ("Chicken wings", "meat"),
    ("Garlic bread", "vegan"),
    ("Spaghetti and Meatballs", "meat"),
    ("Cheese wheel", "dairy gluten-free"),
    ("Chocolate cake", "dairy"),
];

/// A 12×12 PNG, one colour: `/dishes`'s icons.
pub(super) const ICON_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0xd, 0xa, 0x1a, 0xa, 0x0, 0x0, 0x0, 0xd, 0x49, 0x48, 0x44, 0x52, 0x0,
    0x0, 0x0, 0xc, 0x0, 0x0, 0x0, 0xc, 0x8, 0x2, 0x0, 0x0, 0x0, 0xd9, 0x17, 0xcb, 0xb0, 0x0, 0x0,
    0x0, 0x13, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x30, 0x58, 0x10, 0x40, 0x10, 0x31, 0x8c,
    0x2a, 0x1a, 0x8c, 0x8a, 0x0, 0x73, 0xf0, 0xa2, 0x1, 0x18, 0x35, 0x29, 0x69, 0x0, 0x0, 0x0, 0x0,
    0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A page of the dynamic fixture: a small fixed box as MiniWoB++'s, holding `body`, then the
/// script.
pub(super) fn widget_page(title: &str, body: &str, script: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title><style>\
         #box {{ width: 160px; height: 210px; position: relative; font: 10px sans-serif; }}\
         .panel {{ display: none; }} .panel.open {{ display: block; }}\
         </style></head><body><div id=box>{body}</div><script>\
         window.REWARD = 0; window.FAILED = false;\
         function win() {{ window.REWARD = 1; }}\
         function lose() {{ window.FAILED = true; }}\
         {script}</script></body></html>"
    ))
}

/// `suggest(input, menu, names, matches)`: the names that `matches(name, typed)` (both lower
/// case) listed in `menu` as items 300 ms after the last keystroke (jQuery UI's delay), each
/// putting its name into the field when clicked.
pub(super) const SUGGEST_JS: &str = "function suggest(input, menu, names, matches) {\
       let pending = null;\
       input.addEventListener('input', () => {\
         clearTimeout(pending);\
         pending = setTimeout(() => {\
           menu.innerHTML = '';\
           const typed = input.value.toLowerCase();\
           if (!typed) return;\
           for (const name of names.filter((n) => matches(n.toLowerCase(), typed))) {\
             const item = document.createElement('li');\
             item.textContent = name;\
             item.addEventListener('click', () => { input.value = name; menu.innerHTML = ''; });\
             menu.appendChild(item);\
           }\
         }, 300);\
       });\
     }";

/// The dynamic fixture's pages (see each route), in groups of a few.
pub fn dynamic() -> Router<Arc<Counters>> {
    Router::new()
        .merge(dynamic_revealed())
        .merge(dynamic_widgets())
        .merge(dynamic_menus())
        .merge(dynamic_script_state())
        .merge(dynamic_pointer())
        .merge(dynamic_replaced())
        .merge(dynamic_composite())
        .merge(dynamic_items())
        .merge(dynamic_text())
        .merge(dynamic_slow_post())
}

/// How long `/slow-login`'s POST takes to answer: far longer than a still page takes to look
/// settled (as a login that hashes a password with many rounds can, on a loaded machine).
pub const SLOW_POST_MS: u64 = 1_500;

/// How long `/slow-data/rows` takes to answer: far longer than a page's element count takes
/// to look still.
pub const SLOW_DATA_MS: u64 = 800;

/// A login form whose POST answers after [`SLOW_POST_MS`] with a redirect to `/slow-home`,
/// a page of links the form's page does not have.
pub(super) fn dynamic_slow_post() -> Router<Arc<Counters>> {
    Router::new()
        .route(
            "/slow-login",
            get(|| async {
                page(
                    "Log in",
                    "<form method=post action=\"/slow-login\">\
                     <label for=u>Username</label><input id=u name=username>\
                     <button id=go>Log in</button></form>",
                )
            })
            .post(|| async {
                tokio::time::sleep(std::time::Duration::from_millis(SLOW_POST_MS)).await;
                Redirect::to("/slow-home")
            }),
        )
        .route(
            "/slow-data",
            get(|Query(query): Query<HashMap<String, String>>| async move {
                // The shell a single-page app shows until its data comes (Directus's
                // "Loading…"), then the rows its script asked for, by fetch or by
                // XMLHttpRequest.
                let load = if query.contains_key("xhr") {
                    "const request = new XMLHttpRequest(); request.open('GET', '/slow-data/rows');                     request.onload = () => show(JSON.parse(request.responseText)); request.send();"
                } else {
                    "fetch('/slow-data/rows').then((r) => r.json()).then(show);"
                };
                page(
                    "Bookmarks",
                    &format!(
                        "<p id=status>Loading…</p><ul id=rows></ul><script>                         const show = (rows) => {{ document.getElementById('status').remove();                         for (const row of rows) {{ const li = document.createElement('li');                         const a = document.createElement('a'); a.href = '#' + row; a.textContent = row;                         li.appendChild(a); document.getElementById('rows').appendChild(li); }} }};                         {load}</script>"
                    ),
                )
            }),
        )
        .route(
            "/slow-data/rows",
            get(|| async {
                tokio::time::sleep(std::time::Duration::from_millis(SLOW_DATA_MS)).await;
                axum::Json(["Rust", "Debian", "Chromium"])
            }),
        )
        .route(
            "/slow-home",
            get(|| async {
                page(
                    "Site administration",
                    "<p>Welcome.</p><a href=\"/slow-home?groups\">Groups</a> \
                     <a href=\"/slow-home?users\">Users</a>",
                )
            }),
        )
}

/// Dynamic pages: /overlay, /tabs, /collapsible, /dialog, /choices.
pub(super) fn dynamic_revealed() -> Router<Arc<Counters>> {
    Router::new()
        // Content generated after a click on an overlay, in an order drawn from Math.random; any
        // click on a generated button ends the episode and brings the overlay back, as
        // MiniWoB++'s START does (so the page after the right click looks like the one before).
        .route(
            "/overlay",
            get(|| async {
                widget_page(
                    "Overlay",
                    "<div id=area></div><div id=cover style='position:absolute;left:0;top:0;\
                     width:160px;height:210px;background:#111;color:#eee;cursor:pointer'>Begin</div>",
                    "const cover = document.getElementById('cover');\
                     cover.onclick = () => {\
                       cover.style.display = 'none';\
                       const names = ['Red', 'Blue', 'Green', 'Yellow'];\
                       names.sort(() => Math.random() - 0.5);\
                       const area = document.getElementById('area');\
                       area.innerHTML = '';\
                       for (const name of names) {\
                         const b = document.createElement('button');\
                         b.textContent = name;\
                         b.addEventListener('click', () => {\
                           if (name === 'Blue') win(); else lose();\
                           cover.style.display = 'block';\
                         });\
                         area.appendChild(b);\
                       }\
                     };",
                )
            }),
        )
        // Tabs whose links are in-page anchors (`#tab-3`): switching one shows other content,
        // here a link-like <span> that only a listener makes clickable.
        .route(
            "/tabs",
            get(|| async {
                widget_page(
                    "Tabs",
                    "<ul role=tablist>\
                     <li role=tab aria-selected=true><a href='#tab-1'>First</a></li>\
                     <li role=tab aria-selected=false><a href='#tab-2'>Second</a></li>\
                     <li role=tab aria-selected=false><a href='#tab-3'>Third</a></li></ul>\
                     <div class='panel open' id=tab-1><span class=word>lorem</span></div>\
                     <div class=panel id=tab-2><span class=word>ipsum</span></div>\
                     <div class=panel id=tab-3><span class=word>Zephyr</span></div>",
                    "for (const a of document.querySelectorAll('[role=tab] a')) {\
                       a.addEventListener('click', (e) => {\
                         e.preventDefault();\
                         for (const p of document.querySelectorAll('.panel')) p.classList.remove('open');\
                         for (const t of document.querySelectorAll('[role=tab]')) t.setAttribute('aria-selected', 'false');\
                         document.querySelector(a.getAttribute('href')).classList.add('open');\
                         a.parentElement.setAttribute('aria-selected', 'true');\
                       });\
                     }\
                     for (const w of document.querySelectorAll('.word')) {\
                       w.addEventListener('click', () => w.textContent === 'Zephyr' ? win() : lose());\
                     }",
                )
            }),
        )
        // Collapsible sections whose headers are plain <div>s with a click listener (no role, no
        // pointer cursor); the button to press shows only once its section is open.
        .route(
            "/collapsible",
            get(|| async {
                widget_page(
                    "Sections",
                    "<div class=header>Section one</div><div class=panel><p>Nothing here.</p></div>\
                     <div class=header>Section two</div><div class=panel><button id=go>Submit</button></div>",
                    "for (const h of document.querySelectorAll('.header')) {\
                       h.addEventListener('click', () => h.nextElementSibling.classList.toggle('open'));\
                     }\
                     document.getElementById('go').addEventListener('click', win);",
                )
            }),
        )
        // A modal dialog over the page: its close control is an icon without text; the button
        // behind it cannot be clicked until the dialog is gone.
        .route(
            "/dialog",
            get(|| async {
                widget_page(
                    "Dialog",
                    "<button id=next>Continue</button>\
                     <div id=modal style='position:absolute;left:0;top:0;width:160px;height:210px;background:#fff'>\
                     <span class=close-icon style='display:inline-block;width:12px;height:12px;background:#888'></span>\
                     <p>Read this first.</p></div>",
                    "const modal = document.getElementById('modal');\
                     document.querySelector('.close-icon').addEventListener('click', () => modal.remove());\
                     document.getElementById('next').addEventListener('click', () => document.getElementById('modal') ? lose() : win());",
                )
            }),
        )
        // Checkboxes and a radio group, checked on submit; a wrong submission ends the page.
        .route(
            "/choices",
            get(|| async {
                widget_page(
                    "Choices",
                    "<label><input type=checkbox value=Alpha>Alpha</label>\
                     <label><input type=checkbox value=Beta>Beta</label>\
                     <label><input type=checkbox value=Gamma>Gamma</label>\
                     <label><input type=checkbox value=Delta>Delta</label><br>\
                     <label><input type=radio name=size value=Small>Small</label>\
                     <label><input type=radio name=size value=Large>Large</label><br>\
                     <button id=submit>Submit</button>",
                    "document.getElementById('submit').addEventListener('click', () => {\
                       const checked = Array.from(document.querySelectorAll('input:checked')).map((i) => i.value).sort().join(',');\
                       checked === 'Beta,Delta,Large' ? win() : lose();\
                     });",
                )
            }),
        )
}

/// Dynamic pages: /shades, /typed, /scroll-list, /agreement, /table-form, /captcha.
pub(super) fn dynamic_widgets() -> Router<Arc<Counters>> {
    Router::new()
        // Tiles told apart only by their colour (no text, no class, no id), selected by a
        // click on each (a class, as MiniWoB++'s click-shades does); Submit checks that the
        // red ones and only they are selected.
        .route(
            "/shades",
            get(|| async {
                let tiles: String = [
                    "hsl(240,60%,50%)",
                    "hsl(0,70%,60%)",
                    "hsl(120,40%,40%)",
                    "hsl(0,35%,80%)",
                    "hsl(240,80%,75%)",
                    "hsl(0,90%,35%)",
                    "hsl(120,85%,70%)",
                ]
                .iter()
                .map(|c| {
                    format!(
                        "<span style='display:inline-block;width:30px;height:30px;\
                         margin:2px;background-color:{c}'></span>"
                    )
                })
                .collect();
                widget_page(
                    "Shades",
                    &format!("<div id=area>{tiles}</div><button id=submit>Submit</button>"),
                    "const tiles = document.querySelectorAll('#area span'); \
                     tiles.forEach((t) => t.addEventListener('click', () => t.classList.toggle('selected'))); \
                     document.getElementById('submit').addEventListener('click', () => { \
                       const picked = Array.from(tiles).map((t, i) => t.classList.contains('selected') ? i : -1).filter((i) => i >= 0).join(','); \
                       picked === '1,3,5' ? win() : lose(); });",
                )
            }),
        )
        // A field outside any form, checked when its own button is pressed (Enter does nothing).
        .route(
            "/typed",
            get(|| async {
                widget_page(
                    "Typed",
                    "<label>Word</label><input id=word> <button id=check>Check</button>",
                    "document.getElementById('check').addEventListener('click', () => {\
                       document.getElementById('word').value === 'walnut' ? win() : lose();\
                     });",
                )
            }),
        )
        // A list that needs scrolling inside its container; its items are <li>s with listeners.
        .route(
            "/scroll-list",
            get(|| async {
                let items: String = [
                    "Ant", "Bee", "Cat", "Dog", "Eel", "Fox", "Gnu", "Hen", "Ibis", "Jay", "Koi",
                    "Lark", "Mole", "Newt", "Owl", "Pike", "Quokka",
                ]
                .iter()
                .map(|name| format!("<li>{name}</li>"))
                .collect();
                widget_page(
                    "Scroll list",
                    &format!("<ul id=list style='height:60px;overflow:auto;margin:0'>{items}</ul>"),
                    "for (const li of document.querySelectorAll('#list li')) {\
                       li.addEventListener('click', () => li.textContent === 'Quokka' ? win() : lose());\
                     }",
                )
            }),
        )
        // An agreement read to its end before the form opens: the text area is disabled (no
        // focus, no keys) and a scroll listener enables the name field and "Agree" near its
        // bottom, as MiniWoB++'s sign-agreement does; "Cancel" works from the start and ends
        // the episode.
        .route(
            "/agreement",
            get(|| async {
                let text = "The party of the first part agrees to read every clause. ".repeat(40);
                widget_page(
                    "Agreement",
                    &format!(
                        "<h2>User agreement</h2><textarea id=terms disabled                          style='height:60px;width:150px'>{text}</textarea>                         <input id=name placeholder=Name disabled>                         <button id=cancel>Cancel</button><button id=agree disabled>Agree</button>"
                    ),
                    "const terms = document.getElementById('terms');                     terms.addEventListener('scroll', () => {                       if (terms.scrollHeight <= terms.scrollTop + terms.clientHeight + 20) {                         for (const el of document.querySelectorAll('input, button')) el.disabled = false;                       }                     });                     document.getElementById('cancel').addEventListener('click', lose);                     document.getElementById('agree').addEventListener('click', () =>                       document.getElementById('name').value === 'Ada' ? win() : lose());",
                )
            }),
        )
        // A form laid out as a table: each field labelled only by its row's header, the
        // submit a <div> the page listens to (MiniWoB++'s multi-orderings), and one value
        // (the genre) a plain word of the goal that nothing quotes.
        .route(
            "/table-form",
            get(|| async {
                widget_page(
                    "Movie Search",
                    "<table><tr><th>Year</th><td><input id=year></td></tr>\
                     <tr><th>Director</th><td><input id=director></td></tr>\
                     <tr><th>Genre</th><td><input id=genre></td></tr></table>\
                     <div id=go style='border:1px solid #888;width:50px'>Submit</div>",
                    "document.getElementById('go').addEventListener('click', () => { \
                       const v = (id) => document.getElementById(id).value; \
                       v('year') === '1931' && v('director') === 'Lang' && v('genre') === 'noir' \
                         ? win() : lose(); });",
                )
            }),
        )
        // Letters to copy, each in its own skewed inline-block span inside a <div> (no <p>, no
        // field holds them), as in MiniWoB++'s text-transform; a wrong text loses.
        .route(
            "/captcha",
            get(|| async {
                widget_page(
                    "Captcha",
                    "<div id=captcha style='font-size:25px'></div>\
                     <input id=answer> <button id=check>Submit</button>",
                    "const letters = 'qZtW'; \
                     for (const c of letters) { const s = document.createElement('span'); \
                       s.textContent = c; s.style.display = 'inline-block'; \
                       s.style.transform = 'skewY(20deg)'; \
                       document.getElementById('captcha').appendChild(s); } \
                     document.getElementById('check').addEventListener('click', () => \
                       document.getElementById('answer').value === letters ? win() : lose());",
                )
            }),
        )
}

/// Dynamic pages: /forward, /menu, /submenu, /choose-menu.
pub(super) fn dynamic_menus() -> Router<Arc<Counters>> {
    Router::new()
        // An email open, with "Reply" (a form whose "to" holds the sender, its message empty)
        // and "Forward" (an empty "to", the message quoted in it); each form is sent by an
        // icon. Only a forward to Marlena with the message unchanged wins, as in MiniWoB++'s
        // email-inbox-forward-nl: a reply to the sender with her name as its text, or a
        // message typed over, loses.
        .route(
            "/forward",
            get(|| async {
                widget_page(
                    "Mail",
                    "<div id=email><b>Caprice</b><p id=text>Leo placerat. Leo scelerisque.</p>\
                     <span id=reply>Reply</span> <span id=forward>Forward</span></div>\
                     <div id=compose class=panel><label>to: </label><input id=to>\
                     <textarea id=body></textarea>\
                     <span id=send style='display:inline-block;width:14px;height:14px;\
                     background:#48c'></span></div>",
                    "const text = document.getElementById('text').textContent; let mode = ''; \
                     const open = (how, to, body) => { mode = how; \
                       document.getElementById('email').style.display = 'none'; \
                       document.getElementById('to').value = to; \
                       document.getElementById('body').value = body; \
                       document.getElementById('compose').classList.add('open'); }; \
                     document.getElementById('reply').addEventListener('click', () => open('reply', 'Caprice', '')); \
                     document.getElementById('forward').addEventListener('click', () => open('forward', '', text)); \
                     document.getElementById('send').addEventListener('click', () => \
                       mode === 'forward' && document.getElementById('to').value === 'Marlena' \
                         && document.getElementById('body').value === text ? win() : lose());",
                )
            }),
        )
        // A menu drawn as jQuery UI draws one: each listening <li> holds a role=menuitem <div>
        // with the same text (one control, not two: the second click only repeats the first).
        .route(
            "/menu",
            get(|| async {
                widget_page(
                    "Menu",
                    "<ul id=menu><li><div role=menuitem>Save</div></li>\
                     <li><div role=menuitem>Prev</div></li>\
                     <li><div role=menuitem>Zoom In</div></li></ul>",
                    "for (const li of document.querySelectorAll('#menu li')) \
                       li.addEventListener('click', () => li.textContent === 'Prev' ? win() : lose());",
                )
            }),
        )
        // A submenu that opens half a second after the pointer enters its item and closes half
        // a second after it leaves, as jQuery UI's menus do (300 ms there): its items exist
        // only while the pointer rests on "Playback".
        .route(
            "/submenu",
            get(|| async {
                widget_page(
                    "Submenu",
                    "<ul id=menu><li><div role=menuitem>Save</div></li>\
                     <li id=playback><div role=menuitem>Playback</div>\
                     <ul id=sub style='display:none'><li><div role=menuitem>Prev</div></li>\
                     <li><div role=menuitem>Stop</div></li></ul></li>\
                     <li><div role=menuitem>Zoom In</div></li></ul>",
                    "const playback = document.getElementById('playback'); \
                     const sub = document.getElementById('sub'); let timer; \
                     const later = (display) => { clearTimeout(timer); \
                       timer = setTimeout(() => { sub.style.display = display; }, 500); }; \
                     playback.addEventListener('mouseenter', () => later('block')); \
                     playback.addEventListener('mouseleave', () => later('none')); \
                     for (const li of document.querySelectorAll('#menu li')) \
                       li.addEventListener('click', (event) => { event.stopPropagation(); \
                         if (li.querySelector('ul')) return; \
                         li.textContent === 'Prev' ? win() : lose(); });",
                )
            }),
        )
        // A menu where a click on any item chooses it, as jQuery UI's menus do (MiniWoB++'s
        // click-menu): a parent's click is a wrong choice, so its submenu must be opened by
        // pointing at it (300 ms after the pointer enters). "File" says so with
        // aria-haspopup; "Export" only has a hidden list beside it.
        .route(
            "/choose-menu",
            get(|| async {
                widget_page(
                    "Choose",
                    "<ul id=menu><li><div role=menuitem aria-haspopup=true>File</div>\
                     <ul style='display:none'><li><div role=menuitem>New</div></li>\
                     <li><div role=menuitem>Export</div>\
                     <ul style='display:none'><li><div role=menuitem>PNG</div></li>\
                     <li><div role=menuitem>PDF</div></li></ul></li></ul></li>\
                     <li><div role=menuitem>Help</div></li></ul>",
                    "for (const li of document.querySelectorAll('#menu li')) { \
                       const sub = li.querySelector(':scope > ul'); let timer; \
                       const later = (display) => { clearTimeout(timer); \
                         timer = setTimeout(() => { sub.style.display = display; }, 300); }; \
                       if (sub) { li.addEventListener('mouseenter', () => later('block')); \
                         li.addEventListener('mouseleave', () => later('none')); } \
                       li.addEventListener('click', (event) => { event.stopPropagation(); \
                         li.firstElementChild.textContent === 'PDF' ? win() : lose(); }); }",
                )
            }),
        )
}

/// Dynamic pages whose state is held in their script: /board, /dice, /read-to-top, /game,
/// /shell.
pub(super) fn dynamic_script_state() -> Router<Arc<Counters>> {
    Router::new()
        // A board whose cells refuse a second click (their handler answers `false`, as
        // MiniWoB++'s tic-tac-toe does), beside a button whose only effect is in the page's
        // script state (it must be pressed before "Fire").
        .route(
            "/board",
            get(|| async {
                widget_page(
                    "Board",
                    "<div id=board><span class=cell data-index=0>_</span> \
                     <span class=cell data-index=1>_</span></div>\
                     <button id=arm>Arm</button><button id=fire>Fire</button>",
                    "let armed = false; \
                     for (const cell of document.querySelectorAll('.cell')) { \
                       cell.addEventListener('click', function () { \
                         if (this.classList.contains('x')) return false; \
                         this.classList.add('x'); this.textContent = 'X'; }); } \
                     document.getElementById('arm').addEventListener('click', () => { armed = true; }); \
                     document.getElementById('fire').addEventListener('click', () => armed ? win() : lose());",
                )
            }),
        )
        // A die: each "Roll" draws from `Math.random` and, until the fifth, shows "not six"
        // (the second to fourth rolls look exactly like the first); the fifth shows "six".
        // Which throw shows a six is fixed, so the page does not depend on the seed; the draw
        // is what makes the click a roll. Submit wins on a six and loses on anything else.
        .route(
            "/dice",
            get(|| async {
                widget_page(
                    "Dice",
                    "<p>Roll the die until it shows a six, then press Submit.</p>\
                     <p id=face>not rolled yet</p>\
                     <button id=roll>Roll</button><button id=submit>Submit</button>",
                    "let rolls = 0; \
                     document.getElementById('roll').addEventListener('click', () => { \
                       rolls += 1; Math.random(); \
                       document.getElementById('face').textContent = rolls >= 5 ? 'six' : 'not six'; }); \
                     document.getElementById('submit').addEventListener('click', () => \
                       document.getElementById('face').textContent === 'six' ? win() : lose());",
                )
            }),
        )
        // A game of noughts and crosses against a player who moves at random (`Math.random`,
        // seeded by forager): nine squares with no text, a move only a class on its square
        // (the eyes value every board alike); a taken square refuses the click. Three in a row
        // wins; the opponent's three in a row or a full board loses.
        .route(
            "/game",
            get(|| async {
                let squares: String = (0..9)
                    .map(|i| format!("<span class=sq id=sq-{i} data-index={i}></span>"))
                    .collect();
                widget_page(
                    "Game",
                    &format!(
                        "<p>Play X and win the game.</p><style>.sq {{ display: inline-block; \
                         width: 30px; height: 30px; border: 1px solid #333; }}</style>\
                         <div id=game style='width:100px'>{squares}</div>"
                    ),
                    "const board = Array(9).fill(0); \
                     const LINES = [[0,1,2],[3,4,5],[6,7,8],[0,3,6],[1,4,7],[2,5,8],[0,4,8],[2,4,6]]; \
                     const won = (v) => LINES.some((l) => l.every((i) => board[i] === v)); \
                     const mark = (i, v) => { board[i] = v; \
                       document.getElementById('sq-' + i).classList.add(v === 1 ? 'mark-x' : 'mark-o'); }; \
                     for (const sq of document.querySelectorAll('.sq')) { \
                       sq.addEventListener('click', function () { \
                         const i = Number(this.dataset.index); \
                         if (board[i] !== 0 || window.FAILED || window.REWARD) return false; \
                         mark(i, 1); \
                         if (won(1)) return win(); \
                         const free = board.map((v, j) => v === 0 ? j : -1).filter((j) => j >= 0); \
                         if (free.length === 0) return lose(); \
                         mark(free[Math.floor(Math.random() * free.length)], -1); \
                         if (won(-1) || free.length === 1) lose(); }); }",
                )
            }),
        )
        // A shell in the page, as xterm.js makes one: the keys go to a text area of no size
        // that no one sees, a script keeps the line and draws the transcript (a blinking
        // block for a cursor) in a <pre> beside it. Its greeting says to enter "help"; the
        // help lists "list" and "erase NAME"; erasing the file that ends with .log wins, any
        // other loses. Other words than MiniWoB++'s terminal, the same kind of page.
        .route(
            "/shell",
            get(|| async {
                widget_page(
                    "Shell",
                    "<pre id=screen></pre>\
                     <textarea id=keys style='opacity:0;width:0;height:0;position:absolute'></textarea>",
                    "const files = ['notes.txt', 'build.log', 'photo.png', 'readme']; \
                     const prompt = 'guest@box:~$'; let line = ''; let blink = true; \
                     const shown = [\"Enter 'help' to see the commands.\"]; \
                     const screen = document.getElementById('screen'); \
                     const draw = () => { screen.textContent = shown.concat([prompt + ' ' + line + (blink ? '\\u2588' : '')]).join('\\n'); }; \
                     setInterval(() => { blink = !blink; draw(); }, 300); \
                     const run = (command) => { shown.push(prompt + ' ' + command); \
                       const [name, arg] = command.trim().split(/\\s+/); \
                       if (name === 'help') shown.push('list: show the files', 'Usage: list', \
                         'erase: delete a file for good', 'Usage: erase NAME'); \
                       else if (name === 'list') shown.push(files.join('  ')); \
                       else if (name === 'erase') { const i = files.indexOf(arg); \
                         if (i < 0) shown.push('error: no such file'); \
                         else { files.splice(i, 1); arg.endsWith('.log') ? win() : lose(); } } \
                       else shown.push('unknown command'); }; \
                     const keys = document.getElementById('keys'); \
                     keys.addEventListener('keydown', (e) => { \
                       if (e.key === 'Enter') { run(line); line = ''; } \
                       else if (e.key === 'Backspace') line = line.slice(0, -1); \
                       else if (e.key.length === 1) line += e.key; \
                       e.preventDefault(); keys.value = ''; draw(); }); \
                     screen.addEventListener('click', () => keys.focus()); draw();",
                )
            }),
        )
        // A box of text that starts in its middle (no control in it, no listener): the submit
        // checks that it was scrolled to its top, as MiniWoB++'s scroll-text-2 does.
        .route(
            "/read-to-top",
            get(|| async {
                let text = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>".repeat(30);
                widget_page(
                    "Reading",
                    &format!(
                        "<div id=reading style='height:80px;overflow:auto'>{text}</div>                         <button id=done>Submit</button>"
                    ),
                    "const reading = document.getElementById('reading');                     reading.scrollTop = reading.scrollHeight / 2;                     document.getElementById('done').addEventListener('click', () =>                       reading.scrollTop < 10 ? win() : lose());",
                )
            }),
        )
}

/// Dynamic pages where the pointer must land right: /datepicker, /mouse, /edge.
pub(super) fn dynamic_pointer() -> Router<Arc<Counters>> {
    Router::new()
        // A date picker as jQuery UI draws one: a read-only field whose focus opens a calendar
        // (faded in and out on a 13 ms interval, covering the submit button while shown) at
        // May 2016, `Prev`/`Next` links without an href, the days as `#` links; a day sets the
        // field and fades the calendar out. Submit checks the field.
        .route(
            "/datepicker",
            get(|| async {
                widget_page(
                    "Date picker",
                    "<p>Date: <input id=date readonly></p><button id=go>Submit</button>\
                     <div id=cal style='display:none;position:absolute;left:0;top:20px;\
                     width:160px;background:#fff;border:1px solid #999'></div>",
                    "const MONTHS = ['January','February','March','April','May','June','July',\
                       'August','September','October','November','December'];\
                     const cal = document.getElementById('cal');\
                     const field = document.getElementById('date');\
                     let year = 2016, month = 4, fading = null;\
                     const fade = (show) => {\
                       clearInterval(fading);\
                       let step = 0;\
                       cal.style.display = 'block';\
                       cal.style.opacity = show ? 0 : 1;\
                       fading = setInterval(() => {\
                         step += 1;\
                         cal.style.opacity = show ? step / 25 : 1 - step / 25;\
                         if (step >= 25) {\
                           clearInterval(fading);\
                           if (!show) cal.style.display = 'none';\
                         }\
                       }, 13);\
                     };\
                     const draw = () => {\
                       const days = new Date(year, month + 1, 0).getDate();\
                       let html = '<a class=prev title=Prev>Prev</a> <a class=next title=Next>Next</a>\
                         <div class=title>' + MONTHS[month] + ' ' + year + '</div>';\
                       for (let d = 1; d <= days; d++) html += '<a href=# class=day>' + d + '</a> ';\
                       cal.innerHTML = html;\
                       cal.querySelector('.prev').addEventListener('click', () => {\
                         month -= 1; if (month < 0) { month = 11; year -= 1; } draw(); });\
                       cal.querySelector('.next').addEventListener('click', () => {\
                         month += 1; if (month > 11) { month = 0; year += 1; } draw(); });\
                       for (const a of cal.querySelectorAll('.day')) {\
                         a.addEventListener('click', (e) => {\
                           e.preventDefault();\
                           const pad = (n) => String(n).padStart(2, '0');\
                           field.value = pad(month + 1) + '/' + pad(a.textContent) + '/' + year;\
                           fade(false);\
                         });\
                       }\
                     };\
                     field.addEventListener('focus', () => { draw(); fade(true); });\
                     document.getElementById('go').addEventListener('click', () =>\
                       field.value === '02/14/2016' ? win() : lose());",
                )
            }),
        )
        // A switch that answers mousedown and a save control that answers mouseup, never click.
        .route(
            "/mouse",
            get(|| async {
                widget_page(
                    "Mouse",
                    "<div id=switch style='width:40px;height:16px;background:#ccc'>off</div>\
                     <div id=save style='width:40px;height:16px;background:#9c9;margin-top:8px'>Save</div>",
                    "const sw = document.getElementById('switch');\
                     sw.addEventListener('mousedown', () => sw.textContent = sw.textContent === 'off' ? 'on' : 'off');\
                     document.getElementById('save').addEventListener('mouseup', () => sw.textContent === 'on' ? win() : lose());",
                )
            }),
        )
        // Controls at the edge of the small box: half of the button lies outside it, where the
        // box clips it; a click in the middle of its whole box would hit nothing.
        .route(
            "/edge",
            get(|| async {
                widget_page(
                    "Edge",
                    "<div style='width:160px;height:60px;overflow:hidden;position:relative'>\
                     <button id=far style='position:absolute;left:120px;top:20px;width:120px'>Far</button></div>",
                    "document.getElementById('far').addEventListener('click', win);",
                )
            }),
        )
}

/// Dynamic pages whose elements are replaced or come late: /replaced-on-press, /rerender,
/// /autocomplete.
pub(super) fn dynamic_replaced() -> Router<Arc<Counters>> {
    Router::new()
        // A button replaced by a new one as it is pressed (as a list rendered on a timer is
        // when the render lands between the press and the release): the first press makes no
        // click; `window.CLICKS` counts the clicks that arrived, `window.PRESSES` the presses.
        .route(
            "/replaced-on-press",
            get(|| async {
                widget_page(
                    "Replaced on press",
                    "<div id=list></div>",
                    "window.CLICKS = 0; window.PRESSES = 0;\
                     const render = () => {\
                       const list = document.getElementById('list');\
                       list.innerHTML = '';\
                       const b = document.createElement('button');\
                       b.textContent = 'Go';\
                       b.onmousedown = () => { window.PRESSES += 1; if (window.PRESSES === 1) render(); };\
                       b.onclick = () => { window.CLICKS += 1; };\
                       list.appendChild(b);\
                     };\
                     render();",
                )
            }),
        )
        // A list re-created from scratch on every render (new elements each time): click its
        // items in the order asked.
        .route(
            "/rerender",
            get(|| async {
                widget_page(
                    "Rerender",
                    "<div id=list></div>",
                    "const done = [];\
                     const render = () => {\
                       const list = document.getElementById('list');\
                       list.innerHTML = '';\
                       for (const name of ['Alpha', 'Beta', 'Gamma']) {\
                         const b = document.createElement('button');\
                         b.textContent = done.includes(name) ? name + ' (done)' : name;\
                         b.onclick = () => {\
                           done.push(name);\
                           if (done.join() === 'Alpha,Gamma') win();\
                           else if (done.length >= 2 || name !== 'Alpha') lose();\
                           render();\
                         };\
                         list.appendChild(b);\
                       }\
                     };\
                     render(); setInterval(render, 300);",
                )
            }),
        )
        // An autocomplete that answers typing after a 300 ms delay (jQuery UI's default): the
        // suggestion to click exists only once that timer has run.
        .route(
            "/autocomplete",
            get(|| async {
                widget_page(
                    "Autocomplete",
                    "<label for=tags>Tags: </label><input id=tags><ul id=menu></ul>\
                     <button id=go>Submit</button>",
                    &format!(
                        "{SUGGEST_JS}\
                         const names = ['Latvia', 'Lithuania', 'Liechtenstein', 'Estonia', 'Lesotho'];\
                         const input = document.getElementById('tags');\
                         suggest(input, document.getElementById('menu'), names, (n, typed) => n.startsWith(typed));\
                         document.getElementById('go').addEventListener('click', () =>\
                           input.value === 'Lithuania' ? win() : lose());"
                    ),
                )
            }),
        )
}

/// Dynamic pages: /airports, /popup-login, /sliders.
pub(super) fn dynamic_composite() -> Router<Arc<Counters>> {
    Router::new()
        // Two airport fields that take only an airport from their suggestion lists (which come
        // after jQuery UI's 300 ms and hold the typed text anywhere, as book-flight's do), and
        // a search that checks both.
        .route(
            "/airports",
            get(|| async {
                widget_page(
                    "Airports",
                    "<label for=from>From:</label><input id=from><ul id=from-menu></ul>\
                     <label for=to>To:</label><input id=to><ul id=to-menu></ul>\
                     <button id=go>Search</button>",
                    &format!(
                        "{SUGGEST_JS}\
                         const airports = ['Kahului, HI (OGG)', 'Lihue, HI (LIH)',\
                           'Palm Springs, CA (PSP)', 'West Palm Beach, FL (PBI)'];\
                         for (const id of ['from', 'to']) {{\
                           const input = document.getElementById(id);\
                           const menu = document.getElementById(id + '-menu');\
                           suggest(input, menu, airports, (a, typed) => a.includes(typed));\
                           input.addEventListener('blur', () => setTimeout(() => {{ menu.innerHTML = ''; }}, 200));\
                         }}\
                         document.getElementById('go').addEventListener('click', () => {{\
                           const from = document.getElementById('from').value;\
                           const to = document.getElementById('to').value;\
                           if (!airports.includes(from) || !airports.includes(to)) return;\
                           from === 'Lihue, HI (LIH)' && to === 'West Palm Beach, FL (PBI)' ? win() : lose();\
                         }});"
                    ),
                )
            }),
        )
        // A login form whose password field, focused the first time, brings up a popup that
        // takes the fields away until it is dismissed (MiniWoB++'s login-user-popup): the page
        // is then as it was, but the field takes typing.
        .route(
            "/popup-login",
            get(|| async {
                widget_page(
                    "Popup login",
                    "<div id=form><label for=user>Username</label><input id=user>\
                     <label for=pass>Password</label><input id=pass type=password>\
                     <button id=ok>Log in</button></div>",
                    "const fields = () => document.querySelectorAll('#user, #pass, #ok');\
                     let shown = false;\
                     document.getElementById('pass').addEventListener('focus', () => {\
                       if (shown) return;\
                       shown = true;\
                       for (const f of fields()) f.disabled = true;\
                       const popup = document.createElement('div');\
                       popup.id = 'popup';\
                       popup.innerHTML = '<p>Your session is about to expire.</p><p>Exit to home page?</p>\
                         <button id=leave>OK</button> <button id=stay>Cancel</button>';\
                       document.getElementById('box').appendChild(popup);\
                       document.getElementById('leave').onclick = () => lose();\
                       document.getElementById('stay').onclick = () => {\
                         for (const f of fields()) f.disabled = false;\
                         popup.remove();\
                       };\
                     });\
                     document.getElementById('ok').addEventListener('click', () => {\
                       const user = document.getElementById('user').value;\
                       const pass = document.getElementById('pass').value;\
                       user === 'ada' && pass === 'x9Q' ? win() : lose();\
                     });",
                )
            }),
        )
        // Two slider widgets with no ARIA (a handle that takes focus and arrow keys, as jQuery
        // UI's does; MiniWoB++'s use-slider-2), each with its number beside it, at a place drawn
        // from Math.random; the second moves in steps of 5. Submit checks both numbers.
        .route(
            "/sliders",
            get(|| async {
                widget_page(
                    "Sliders",
                    "<style>.track { position: relative; width: 120px; height: 8px; background: #ccc; margin: 10px 6px; }\
                     .slider-handle { position: absolute; top: -4px; width: 12px; height: 16px; margin-left: -6px; background: #36c; }</style>\
                     <div class=track id=a><span class=slider-handle tabindex=0></span></div><div id=a-val></div>\
                     <div class=track id=b><span class=slider-handle tabindex=0></span></div><div id=b-val></div>\
                     <button id=go>Submit</button>",
                    "function slider(id, min, max, step) {\
                       const handle = document.querySelector('#' + id + ' .slider-handle');\
                       const out = document.getElementById(id + '-val');\
                       let value = min + step * Math.floor(Math.random() * ((max - min) / step + 1));\
                       const show = () => {\
                         handle.style.left = ((value - min) / (max - min) * 100) + '%';\
                         out.textContent = String(value);\
                       };\
                       handle.addEventListener('keydown', (e) => {\
                         if (e.key === 'Home') value = min;\
                         else if (e.key === 'End') value = max;\
                         else if (e.key === 'ArrowRight' || e.key === 'ArrowUp') value = Math.min(max, value + step);\
                         else if (e.key === 'ArrowLeft' || e.key === 'ArrowDown') value = Math.max(min, value - step);\
                         else return;\
                         e.preventDefault();\
                         show();\
                       });\
                       show();\
                       return () => value;\
                     }\
                     const a = slider('a', -10, 40, 1);\
                     const b = slider('b', 0, 100, 5);\
                     document.getElementById('go').addEventListener('click', () =>\
                       a() === -3 && b() === 35 ? win() : lose());",
                )
            }),
        )
}

/// Dynamic pages: /dishes, /icon/{name}, /blocks, /overlap, /multiple.
pub(super) fn dynamic_items() -> Router<Arc<Counters>> {
    Router::new()
        // A menu (MiniWoB++'s order-food): each dish has a "-" and a "+" that only its item
        // tells apart, and icons whose alt text says what it is ("vegan"), loaded slowly.
        // Order! checks the quantities against `?want=` (dish indexes, a repeat per portion),
        // or with `?kind=vegan&count=3`, that as many portions are ordered, all of that kind.
        .route(
            "/dishes",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                let want = q.get("want").cloned().unwrap_or_default();
                let kind = q.get("kind").cloned().unwrap_or_default();
                let count: u32 = q.get("count").and_then(|c| c.parse().ok()).unwrap_or(0);
                let dishes = MENU_DISHES
                    .iter()
                    .map(|(name, kinds)| {
                        let icons: String = kinds
                            .split(' ')
                            .map(|k| format!("<img alt={k} src='/icon/{k}.png' width=12 height=12>"))
                            .collect();
                        format!(
                            "<div class=dish data-kinds='{kinds}'><div class=desc><span class=name>{name}</span> {icons}</div>\
                             <div class=qty><span class=minus>-</span><span class=count></span><span class=plus>+</span></div></div>"
                        )
                    })
                    .collect::<String>();
                widget_page(
                    "Menu",
                    &format!("<style>.dish {{ display: flex; gap: 4px; }} .qty span {{ padding: 0 3px; cursor: pointer; }}</style>\
                              <template id=dishes>{dishes}</template><div id=menu></div><button id=go>Order!</button>"),
                    // Drawn once the page has loaded, as MiniWoB++ draws after START: the
                    // icons load after the document is complete.
                    &format!(
                        "const counts = [];\
                         window.addEventListener('load', () => setTimeout(() => {{\
                         document.getElementById('menu').appendChild(document.getElementById('dishes').content.cloneNode(true));\
                         document.querySelectorAll('.dish').forEach((dish, n) => {{\
                           counts.push(0);\
                           const show = () => dish.querySelector('.count').textContent = counts[n] || '';\
                           dish.querySelector('.plus').addEventListener('click', () => {{ counts[n]++; show(); }});\
                           dish.querySelector('.minus').addEventListener('click', () => {{ counts[n] = Math.max(0, counts[n] - 1); show(); }});\
                         }});\
                         }}, 10));\
                         document.getElementById('go').addEventListener('click', () => {{\
                           const dishes = Array.from(document.querySelectorAll('.dish'));\
                           if ('{kind}') {{\
                             const total = counts.reduce((a, b) => a + b, 0);\
                             const all = dishes.every((d, n) => !counts[n] || d.dataset.kinds.split(' ').includes('{kind}'));\
                             return total === {count} && all ? win() : lose();\
                           }}\
                           const want = dishes.map(() => 0);\
                           '{want}'.split(',').filter(Boolean).forEach((n) => want[Number(n)]++);\
                           counts.join() === want.join() ? win() : lose();\
                         }});"
                    ),
                )
            }),
        )
        .route(
            "/icon/{name}",
            get(|| async {
                // Slower than a settle's first looks: the page is whole only once it is here.
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                ([(header::CONTENT_TYPE, "image/png"), (header::CACHE_CONTROL, "no-store")], ICON_PNG)
            }),
        )
        // Blocks to count (MiniWoB++'s visual-addition): two groups of empty, coloured spans,
        // as many as Math.random draws; the answer is their number.
        .route(
            "/blocks",
            get(|| async {
                widget_page(
                    "Blocks",
                    "<style>.addition-block { display: inline-block; width: 8px; height: 8px; margin: 1px; background: #36c; }</style>\
                     <div><span id=first></span> + <span id=second></span></div>\
                     <input id=answer><button id=go>Submit</button>",
                    "const draw = (id) => {\
                       const n = 1 + Math.floor(Math.random() * 9);\
                       document.getElementById(id).innerHTML = '<span class=addition-block></span>'.repeat(n);\
                       return n;\
                     };\
                     const total = draw('first') + draw('second');\
                     document.getElementById('go').addEventListener('click', () =>\
                       document.getElementById('answer').value === String(total) ? win() : lose());",
                )
            }),
        )
        // Two buttons drawn half over each other (MiniWoB++'s click-button-sequence): ONE's
        // middle is under TWO, its lower edge is not. Both in order win.
        .route(
            "/overlap",
            get(|| async {
                widget_page(
                    "Overlap",
                    "<button id=one style='position:absolute; left:91px; top:75px; width:40px; height:40px'>ONE</button>\
                     <button id=two style='position:absolute; left:73px; top:60px; width:40px; height:40px'>TWO</button>\
                     <div id=log></div>",
                    "let pressed = '';\
                     document.getElementById('one').addEventListener('click', () => {\
                       pressed += '1'; document.getElementById('log').textContent = 'pressed ONE';\
                     });\
                     document.getElementById('two').addEventListener('click', () => {\
                       pressed += '2'; pressed === '12' ? win() : lose();\
                     });",
                )
            }),
        )
        // A list that holds several choices at once (`<select multiple>`), checked on submit.
        .route(
            "/multiple",
            get(|| async {
                widget_page(
                    "Multiple",
                    "<select id=options multiple style='height:60px'>\
                     <option>Fayette</option><option>Danit</option><option>Claudie</option>\
                     <option>Fay</option><option>Malva</option></select>\
                     <button id=go>Submit</button>",
                    "document.getElementById('go').addEventListener('click', () => {\
                       const chosen = Array.from(document.getElementById('options').selectedOptions)\
                         .map((o) => o.value).sort().join();\
                       chosen === 'Claudie,Fayette' ? win() : lose();\
                     });",
                )
            }),
        )
}

/// Dynamic pages: /last-word, /labels.
pub(super) fn dynamic_text() -> Router<Arc<Counters>> {
    Router::new()
        // A text area of 150 words drawn by Math.random (MiniWoB++'s scroll-text): its last
        // word, typed into the field, wins.
        .route(
            "/last-word",
            get(|| async {
                widget_page(
                    "Last word",
                    "<textarea id=text rows=4></textarea>\
                     <input id=answer><button id=go>Submit</button>",
                    "const pool = ['amet', 'lorem', 'ipsum', 'dolor', 'tellus', 'vitae', 'magna',\
                       'sodales', 'egestas', 'faucibus', 'aliquam', 'pretium', 'viverra', 'integer'];\
                     const words = Array.from({ length: 150 }, () =>\
                       pool[Math.floor(Math.random() * pool.length)]);\
                     words.push('zygote');\
                     document.getElementById('text').value = words.join(' ') + '.';\
                     document.getElementById('go').addEventListener('click', () =>\
                       document.getElementById('answer').value === 'zygote' ? win() : lose());",
                )
            }),
        )
        // A search form whose fields no <label> names, in rows shuffled by Math.random
        // (MiniWoB++'s multi-layouts): `layout=field` puts each label in a div beside the div
        // that holds the field, `layout=after` puts it after the field. "fantasy", "Little",
        // 2012 in the right fields win.
        .route(
            "/labels",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                let after = q.get("layout").is_some_and(|l| l == "after");
                let (rows, submit) = if after {
                    (
                        "<div class=entry><input id=genre><div class=tag>Genre</div></div>\
                         <div class=entry><input id=director><div class=tag>Director</div></div>\
                         <div class=entry><input id=year><div class=tag>Year</div></div>",
                        "<div class=footer><div id=go style='cursor:pointer'>Search</div></div>",
                    )
                } else {
                    (
                        "<div class=field><div class=label>Movie Genre</div><div class=input><input id=genre></div></div>\
                         <div class=field><div class=label>Director Name</div><div class=input><input id=director></div></div>\
                         <div class=field><div class=label>Released Date</div><div class=input><input id=year></div></div>",
                        "<div class=submit-row><button id=go type=button>Go!</button></div>",
                    )
                };
                widget_page(
                    "Labels",
                    &format!("<div id=rows>{rows}</div>{submit}"),
                    "const rows = document.getElementById('rows');\
                     const shuffled = Array.from(rows.children).sort(() => Math.random() - 0.5);\
                     shuffled.forEach((row) => rows.appendChild(row));\
                     const value = (id) => document.getElementById(id).value;\
                     document.getElementById('go').addEventListener('click', () =>\
                       value('genre') === 'fantasy' && value('director') === 'Little' && value('year') === '2012'\
                         ? win() : lose());",
                )
            }),
        )
}
