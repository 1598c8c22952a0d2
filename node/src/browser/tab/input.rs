//! What a tab does on its page: clicks, hovers, fills, typing, suggestions, sliders, selects,
//! scrolls and key presses, each through the action script (act.js) or CDP input events.
//!
//! A click moves the pointer over the target first and aims again until the target holds still
//! (`HOVER_AIMS`): a hover may swap what is under the pointer. A fill into a key catcher (a
//! terminal's hidden field) types key by key (`type_keys`, `Input.dispatchKeyEvent`).
//! `Tab::fill_choosing` fills as a person does: where typing brought up a list with an entry that
//! holds the typed text as whole words, it clicks the first such entry. `Tab::slide` moves a
//! slider with the keyboard: `Home`, one arrow press to learn which number on the page moves and
//! by how much, then the rest in presses, read back and corrected (`SLIDE_ROUNDS`,
//! `MAX_SLIDE_KEYS`); it fails where no number moves or it stops short.

use super::{ACT, LocatorIndex, PRELUDE, Tab, js_string, timed};
use crate::environment::EnvError;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams,
};
use chromiumoxide::layout::Point;
use forager_protocol::Target;
use serde::Deserialize;
use std::time::Duration;

/// How often a click aims again at a target its hover moved or blanked, and the pause between
/// two aims (about a frame): a hover image loads in a few milliseconds from a local server.
const HOVER_AIMS: usize = 8;
const HOVER_FRAME: Duration = Duration::from_millis(16);

/// Presses again after a click that never arrived because its target was replaced.
const CLICK_RETRIES: u32 = 2;

/// What `init.js` counted of the page's clicks.
#[derive(Debug, Deserialize)]
struct ClickCount {
    clicks: u64,
    #[serde(rename = "pressedGone")]
    pressed_gone: bool,
}

/// A slide's bounds: rounds of arrow presses checked against the number that moves, and the
/// presses in all (a slider of 1000 steps is walked; a finer one is no keyboard's).
const SLIDE_ROUNDS: usize = 4;
const MAX_SLIDE_KEYS: u32 = 1000;

#[derive(Debug, Deserialize)]
pub(super) struct ActResult {
    pub(super) status: String,
    pub(super) locator: Option<i64>,
    pub(super) x: Option<f64>,
    pub(super) y: Option<f64>,
    pub(super) covered_by: Option<String>,
    /// A date, time, colour or range input: its value is set rather than typed.
    pub(super) picker: Option<bool>,
    /// A terminal's field (see `keyCatcher` in prelude.js): typed key by key, since the page
    /// reads its key presses, not its value.
    pub(super) keys: Option<bool>,
    /// Where a scrolling box stands (`top`, `middle`, `bottom`).
    pub(super) at: Option<String>,
    /// Listed elements that hold a typed text (see [`Tab::fill_choosing`]).
    #[serde(default)]
    pub(super) suggestions: Vec<Suggestion>,
    /// The numbers a slider's move may show (see [`Tab::slide`]).
    #[serde(default)]
    pub(super) readings: Vec<Reading>,
}

/// A number on the page, where it stands (`@value`, `@aria` or a CSS path).
#[derive(Debug, Deserialize)]
pub(super) struct Reading {
    pub(super) path: String,
    pub(super) number: f64,
}

/// A listed element holding a typed text: a suggestion, when typing brought it up.
#[derive(Debug, Deserialize)]
pub(super) struct Suggestion {
    pub(super) path: String,
    pub(super) role: String,
    pub(super) name: String,
}

/// DOM key name → (key, code, Windows virtual key code, text).
pub(super) fn key_info(
    key: &str,
) -> Option<(&'static str, &'static str, i64, Option<&'static str>)> {
    Some(match key.to_ascii_lowercase().as_str() {
        "enter" | "return" => ("Enter", "Enter", 13, Some("\r")),
        "escape" | "esc" => ("Escape", "Escape", 27, None),
        "tab" => ("Tab", "Tab", 9, None),
        "backspace" => ("Backspace", "Backspace", 8, None),
        "space" | " " => (" ", "Space", 32, Some(" ")),
        "arrowdown" => ("ArrowDown", "ArrowDown", 40, None),
        "arrowup" => ("ArrowUp", "ArrowUp", 38, None),
        "arrowleft" => ("ArrowLeft", "ArrowLeft", 37, None),
        "arrowright" => ("ArrowRight", "ArrowRight", 39, None),
        "pagedown" => ("PageDown", "PageDown", 34, None),
        "pageup" => ("PageUp", "PageUp", 33, None),
        "home" => ("Home", "Home", 36, None),
        "end" => ("End", "End", 35, None),
        _ => return None,
    })
}

impl Tab {
    pub(super) async fn act_script(
        &self,
        op: &str,
        target: &Target,
        arg: &str,
    ) -> Result<ActResult, EnvError> {
        // A link's declared address: a last-resort element that links elsewhere is not it.
        let href = match &target.sends {
            forager_protocol::action::Sends::Get { url } if target.role == "link" => Some(url),
            _ => None,
        };
        let expect = serde_json::json!({ "role": target.role, "name": target.name, "href": href });
        let script = format!(
            "(() => {{ const OP = {}; const LOCATORS = {}; const EXPECT = {}; const ARG = {};\n{PRELUDE}\n{ACT}\n}})()",
            js_string(&op),
            js_string(&target.locators),
            js_string(&expect),
            js_string(&arg)
        );
        let value = self.evaluate(script, true).await?;
        serde_json::from_value(value)
            .map_err(|e| EnvError::Other(format!("action script did not parse: {e}")))
    }

    pub(super) fn target_error(result: &ActResult, what: &str) -> Option<EnvError> {
        match result.status.as_str() {
            "ok" => None,
            "missing" => Some(EnvError::TargetMissing(what.to_owned())),
            "hidden" | "disabled" => Some(EnvError::TargetHidden(format!(
                "{what} ({})",
                result.status
            ))),
            "covered" => Some(EnvError::TargetCovered(format!(
                "{what} is under {}",
                result.covered_by.as_deref().unwrap_or("another element")
            ))),
            other => Some(EnvError::Other(format!("{what}: {other}"))),
        }
    }

    /// Clicks the element a locator chain resolves to, with real mouse events at its centre.
    pub async fn click(&self, target: &Target, what: &str) -> Result<LocatorIndex, EnvError> {
        let result = self.act_script("point", target, "").await?;
        if let Some(error) = Tab::target_error(&result, what) {
            return Err(error);
        }
        let mut point = Point {
            x: result.x.unwrap_or(0.0),
            y: result.y.unwrap_or(0.0),
        };
        // The pointer goes over the target first, as a hand does. Hover styles may swap or move
        // what is under it (an icon replaced by its hover image, blank while that loads): a
        // press there and a release on the parent make no click. So the target is aimed at
        // again until it holds still, a few frames at most, and clicked where it stands.
        timed("hover", self.timeouts.call, self.page.move_mouse(point)).await?;
        for _ in 0..HOVER_AIMS {
            let again = self.act_script("point", target, "").await?;
            if again.status == "ok" {
                let aimed = Point {
                    x: again.x.unwrap_or(point.x),
                    y: again.y.unwrap_or(point.y),
                };
                if (aimed.x - point.x).abs() < 0.5 && (aimed.y - point.y).abs() < 0.5 {
                    break;
                }
                point = aimed;
                timed("hover", self.timeouts.call, self.page.move_mouse(point)).await?;
            }
            tokio::time::sleep(HOVER_FRAME).await;
        }
        // A page that renders its list again every few hundred milliseconds may replace the
        // target between the press and the release: then no click arrives. Pressed again on
        // the new element, a few times at most; a click that arrived, or whose pressed element
        // is still there (the page ignored it), is not repeated.
        for attempt in 0..=CLICK_RETRIES {
            let before = self.clicks().await;
            timed("click", self.timeouts.call, self.page.click(point)).await?;
            let (Some(before), Some(after)) = (before, self.clicks().await) else {
                break;
            };
            if after.clicks > before.clicks || !after.pressed_gone || attempt == CLICK_RETRIES {
                break;
            }
            tracing::debug!(
                what,
                attempt,
                "the target was replaced mid-click; pressed again"
            );
            let again = self.act_script("point", target, "").await?;
            if again.status != "ok" {
                break;
            }
            point = Point {
                x: again.x.unwrap_or(point.x),
                y: again.y.unwrap_or(point.y),
            };
        }
        Ok(result.locator.unwrap_or(0).max(0) as usize)
    }

    /// The page's count of trusted clicks (`init.js`), `None` where it cannot be read (a
    /// document without forager's init script, a navigation under way).
    async fn clicks(&self) -> Option<ClickCount> {
        let value = self
            .evaluate("window[Symbol.for('forager.clicks')] || null".into(), false)
            .await
            .ok()?;
        serde_json::from_value(value).ok()
    }

    /// Rests the mouse pointer on the element a locator chain resolves to, at its centre,
    /// pressing nothing. What the hover sets off (a submenu opened by a timer) is awaited by
    /// the settle that follows every action.
    pub async fn hover(&self, target: &Target, what: &str) -> Result<LocatorIndex, EnvError> {
        let result = self.act_script("point", target, "").await?;
        if let Some(error) = Tab::target_error(&result, what) {
            return Err(error);
        }
        let point = Point {
            x: result.x.unwrap_or(0.0),
            y: result.y.unwrap_or(0.0),
        };
        timed("hover", self.timeouts.call, self.page.move_mouse(point)).await?;
        Ok(result.locator.unwrap_or(0).max(0) as usize)
    }

    /// Types text into the element a locator chain resolves to (after clearing it).
    pub async fn fill(
        &self,
        target: &Target,
        what: &str,
        text: &str,
    ) -> Result<LocatorIndex, EnvError> {
        let result = self.act_script("focus_clear", target, "").await?;
        if result.status == "unfocusable" {
            return Err(EnvError::TargetHidden(format!("{what} cannot take focus")));
        }
        if result.status == "readonly" {
            return Err(EnvError::TargetHidden(format!(
                "{what} is read-only: it takes no typing"
            )));
        }
        if let Some(error) = Tab::target_error(&result, what) {
            return Err(error);
        }
        if result.picker == Some(true) {
            let set = self.act_script("set_value", target, text).await?;
            if set.status == "bad_value" {
                return Err(EnvError::TargetHidden(format!(
                    "{what} does not take the value {text:?}"
                )));
            }
            if let Some(error) = Tab::target_error(&set, what) {
                return Err(error);
            }
            return Ok(set.locator.unwrap_or(0).max(0) as usize);
        }
        if result.keys == Some(true) {
            self.type_keys(text).await?;
        } else if !text.is_empty() {
            timed(
                "type",
                self.timeouts.call,
                self.page.execute(InsertTextParams::new(text)),
            )
            .await?;
        }
        Ok(result.locator.unwrap_or(0).max(0) as usize)
    }

    /// Types text one key at a time (a key down that carries the character, a key up), as a
    /// keyboard does: a terminal reads its field's key presses and keeps its own line, so
    /// inserted text would reach the field's value and nothing else. Bounded: one call's
    /// timeout per key event.
    pub(super) async fn type_keys(&self, text: &str) -> Result<(), EnvError> {
        for character in text.chars() {
            let key = character.to_string();
            let down = DispatchKeyEventParams::builder()
                .r#type(DispatchKeyEventType::KeyDown)
                .key(key.clone())
                .text(key.clone())
                .build()
                .map_err(EnvError::Other)?;
            let up = DispatchKeyEventParams::builder()
                .r#type(DispatchKeyEventType::KeyUp)
                .key(key)
                .build()
                .map_err(EnvError::Other)?;
            timed("key down", self.timeouts.call, self.page.execute(down)).await?;
            timed("key up", self.timeouts.call, self.page.execute(up)).await?;
        }
        Ok(())
    }

    /// Types text into a field as [`Tab::fill`] does and then, where typing brought up a list
    /// (an autocomplete's suggestions) with an entry that holds the text as whole words,
    /// chooses the first such entry, as a person takes the top one: what makes the "LIH"
    /// typed into "From:" the "Kauai Island/Lihue, HI (LIH)" the form accepts. Where none
    /// came up, the typed text stays. An entry that cannot be clicked leaves the text as
    /// typed too: the fill itself worked.
    pub async fn fill_choosing(
        &self,
        target: &Target,
        what: &str,
        text: &str,
    ) -> Result<LocatorIndex, EnvError> {
        if text.trim().is_empty() {
            return self.fill(target, what, text).await;
        }
        let before: Vec<String> = self
            .suggestions(target, text, &[])
            .await?
            .into_iter()
            .map(|s| s.path)
            .collect();
        let index = self.fill(target, what, text).await?;
        self.settle().await?;
        if let Some(entry) = self
            .suggestions(target, text, &before)
            .await?
            .into_iter()
            .next()
        {
            let pick = Target {
                locators: vec![forager_protocol::Locator::Css(entry.path)],
                role: entry.role,
                name: entry.name,
                sends: Default::default(),
            };
            let what = format!("suggestion {:?} for {what}", pick.name);
            if let Err(error) = self.click(&pick, &what).await {
                tracing::debug!(%error, "a suggestion was not chosen; the typed text stays");
            }
        }
        Ok(index)
    }

    /// The listed elements (not in `before`, by CSS path) that hold `text`: see act.js
    /// `suggestions`. None where the field is not found: the fill says why.
    pub(super) async fn suggestions(
        &self,
        field: &Target,
        text: &str,
        before: &[String],
    ) -> Result<Vec<Suggestion>, EnvError> {
        let arg = serde_json::json!({ "text": text, "before": before }).to_string();
        let result = self.act_script("suggestions", field, &arg).await?;
        Ok(if result.status == "ok" {
            result.suggestions
        } else {
            Vec::new()
        })
    }

    /// Moves a slider to `value` as a person does with the keyboard: its handle focused,
    /// `Home`, one `ArrowRight` to learn which number on the page moves with it (its own
    /// value, or a readout beside it) and by how much a key moves it, then as many arrow
    /// presses as the rest of the way takes, checked and corrected a few rounds at most.
    /// Fails where no number moves with it, or where it stops short of the value (outside
    /// its range, or between its steps).
    pub async fn slide(
        &self,
        target: &Target,
        what: &str,
        value: &str,
    ) -> Result<LocatorIndex, EnvError> {
        let goal: f64 = value
            .trim()
            .replace('\u{2212}', "-")
            .parse()
            .map_err(|_| EnvError::Other(format!("{what}: {value:?} is not a number")))?;
        let focus = self.act_script("slider", target, "focus").await?;
        if focus.status == "unfocusable" {
            return Err(EnvError::TargetHidden(format!("{what} cannot take focus")));
        }
        if let Some(error) = Tab::target_error(&focus, what) {
            return Err(error);
        }
        let index = focus.locator.unwrap_or(0).max(0) as usize;
        self.press("Home").await?;
        let start = self.slider_readings(target, what).await?;
        // Which number moves, and by how much per key: right (up), or where the slider was
        // at its end already and takes no Home, left.
        let mut probe = None;
        for key in ["ArrowRight", "ArrowLeft"] {
            self.press(key).await?;
            let moved = self.slider_readings(target, what).await?;
            probe = moved.iter().find_map(|after| {
                let before = start.iter().find(|b| b.path == after.path)?;
                let delta = after.number - before.number;
                (delta != 0.0).then(|| (after.path.clone(), after.number, delta, key))
            });
            if probe.is_some() {
                break;
            }
        }
        let Some((readout, mut now, delta, key)) = probe else {
            return Err(EnvError::TargetHidden(format!(
                "{what}: no number on the page moves with it"
            )));
        };
        // The value per ArrowRight.
        let step = if key == "ArrowRight" { delta } else { -delta };
        let mut pressed = 0;
        for _ in 0..SLIDE_ROUNDS {
            let keys = ((goal - now) / step).round();
            if keys == 0.0 {
                break;
            }
            let key = if keys > 0.0 {
                "ArrowRight"
            } else {
                "ArrowLeft"
            };
            let count = (keys.abs() as u32).min(MAX_SLIDE_KEYS.saturating_sub(pressed));
            if count == 0 {
                break;
            }
            for _ in 0..count {
                self.press(key).await?;
            }
            pressed += count;
            let before = now;
            now = self
                .slider_readings(target, what)
                .await?
                .into_iter()
                .find(|r| r.path == readout)
                .map(|r| r.number)
                .ok_or_else(|| {
                    EnvError::TargetHidden(format!("{what}: the number that moved with it is gone"))
                })?;
            if now == before {
                break; // at an end of its range
            }
        }
        if (now - goal).abs() > 1e-9 {
            return Err(EnvError::TargetHidden(format!(
                "{what} stops at {now}, not at {value}"
            )));
        }
        Ok(index)
    }

    /// The numbers a slider's move may show, after a frame for the page to show them.
    pub(super) async fn slider_readings(
        &self,
        target: &Target,
        what: &str,
    ) -> Result<Vec<Reading>, EnvError> {
        tokio::time::sleep(HOVER_FRAME).await;
        let result = self.act_script("slider", target, "read").await?;
        if let Some(error) = Tab::target_error(&result, what) {
            return Err(error);
        }
        Ok(result.readings)
    }

    /// Chooses an option (by value or label) in a select.
    pub async fn select(
        &self,
        target: &Target,
        what: &str,
        option: &str,
    ) -> Result<LocatorIndex, EnvError> {
        let result = self.act_script("select", target, option).await?;
        if result.status == "no_option" {
            return Err(EnvError::TargetMissing(format!(
                "option {option:?} in {what}"
            )));
        }
        if let Some(error) = Tab::target_error(&result, what) {
            return Err(error);
        }
        Ok(result.locator.unwrap_or(0).max(0) as usize)
    }

    /// Scrolls a box to its top or bottom as a person does: the mouse wheel over it (a box the
    /// page disabled still scrolls so); where the wheel did not get it there (a box under
    /// another), its position is set as dragging its scroll bar would.
    pub async fn scroll(
        &self,
        target: &Target,
        what: &str,
        to: forager_protocol::ScrollEdge,
    ) -> Result<LocatorIndex, EnvError> {
        let probe = self.act_script("scroll", target, "probe").await?;
        if let Some(error) = Tab::target_error(&probe, what) {
            return Err(error);
        }
        let index = probe.locator.unwrap_or(0).max(0) as usize;
        let edge = to.as_str();
        if probe.at.as_deref() == Some(edge) {
            return Ok(index);
        }
        // One notch per 100 px in Chromium; a long box takes a few wheel turns.
        let delta = match to {
            forager_protocol::ScrollEdge::Top => -100_000.0,
            forager_protocol::ScrollEdge::Bottom => 100_000.0,
        };
        for _ in 0..3 {
            let wheel = DispatchMouseEventParams::builder()
                .r#type(DispatchMouseEventType::MouseWheel)
                .x(probe.x.unwrap_or(0.0))
                .y(probe.y.unwrap_or(0.0))
                .delta_x(0.0)
                .delta_y(delta)
                .build()
                .map_err(EnvError::Other)?;
            timed("wheel", self.timeouts.call, self.page.execute(wheel)).await?;
            tokio::time::sleep(Duration::from_millis(30)).await;
            let now = self.act_script("scroll", target, "where").await?;
            if now.at.as_deref() == Some(edge) {
                return Ok(index);
            }
        }
        let set = self.act_script("scroll", target, edge).await?;
        if let Some(error) = Tab::target_error(&set, what) {
            return Err(error);
        }
        if set.at.as_deref() != Some(edge) {
            return Err(EnvError::TargetHidden(format!(
                "{what} did not scroll to its {edge}"
            )));
        }
        Ok(index)
    }

    /// Presses a key (DOM `KeyboardEvent.key` name) in the focused element.
    pub async fn press(&self, key: &str) -> Result<(), EnvError> {
        let (key_name, code, vk, text) =
            key_info(key).ok_or_else(|| EnvError::Other(format!("unsupported key {key:?}")))?;
        let mut down = DispatchKeyEventParams::builder()
            .r#type(DispatchKeyEventType::KeyDown)
            .key(key_name)
            .code(code)
            .windows_virtual_key_code(vk)
            .native_virtual_key_code(vk);
        if let Some(text) = text {
            down = down.text(text);
        }
        let down = down.build().map_err(EnvError::Other)?;
        let up = DispatchKeyEventParams::builder()
            .r#type(DispatchKeyEventType::KeyUp)
            .key(key_name)
            .code(code)
            .windows_virtual_key_code(vk)
            .native_virtual_key_code(vk)
            .build()
            .map_err(EnvError::Other)?;
        timed("key down", self.timeouts.call, self.page.execute(down)).await?;
        timed("key up", self.timeouts.call, self.page.execute(up)).await?;
        Ok(())
    }
}
