//! What a tab's page may send: the origins it may reach, the network's log, and the gate that
//! lets writes through only while an action that may write runs.
//!
//! Requests to other origins fail with `BlockedByClient` before they leave and are logged. While
//! an action runs, a request other than `GET`/`HEAD`/`OPTIONS` passes only when the action's class
//! allows writes (`risk::allows_writes`), what its handler and body say it does is within that
//! class (`risk::class_of_write`: a "Save" whose form deletes is refused) and it goes to the
//! record the action's page names (`risk::writes_another_record`); refused writes are counted
//! (`refused_writes`).
//! `steps::perform_gated` turns a refused write into `EnvError::RiskUnderestimated`, and the
//! environment re-rates the action's key for the rest of its run.

use serde::Serialize;
use std::collections::BTreeSet;

/// Origins a tab may talk to. `data:`, `blob:` and `about:` are always allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginGuard {
    pub(super) allowed: Vec<String>,
}

impl OriginGuard {
    /// A guard allowing these origins (`scheme://host:port`), given as URLs.
    pub fn new<'a>(urls: impl IntoIterator<Item = &'a str>) -> OriginGuard {
        let allowed = urls
            .into_iter()
            .filter_map(|u| url::Url::parse(u).ok())
            .map(|u| u.origin().ascii_serialization())
            .collect();
        OriginGuard { allowed }
    }

    /// Whether a request to `url` may leave the browser.
    pub fn allows(&self, url: &str) -> bool {
        if url.starts_with("data:") || url.starts_with("blob:") || url.starts_with("about:") {
            return true;
        }
        match url::Url::parse(url) {
            Ok(parsed) => {
                let origin = parsed.origin().ascii_serialization();
                self.allowed.contains(&origin)
            }
            Err(_) => false,
        }
    }
}

/// What the browser's network saw, across all tabs of an environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NetworkLog {
    /// Requests let through.
    pub allowed: u64,
    /// Origins of the requests let through.
    pub allowed_origins: BTreeSet<String>,
    /// Requests blocked because of their origin.
    pub blocked: u64,
    /// The first blocked URLs.
    pub blocked_urls: Vec<String>,
    /// Writes the network gate refused.
    pub refused_writes: u64,
    /// The first of them, `METHOD URL`.
    pub refused_write_requests: Vec<String>,
    /// Of those, writes the page sent on its own (a timer's, a heartbeat's, a beacon, between
    /// actions): refused, charged to no action.
    pub background_refused: u64,
    /// The first of them, `METHOD URL`.
    pub background_requests: Vec<String>,
    /// Of those, writes an action that commits nothing caused and that save only the page's
    /// own view (a menu's state, the items open, a draft): refused, no reason to prune.
    pub view_state_refused: u64,
}

/// The network gate of one tab: the class of the action running now (read-only between
/// actions), and the requests refused since it was last set. A write (a request other than
/// `GET`/`HEAD`/`OPTIONS`) leaves only while an action whose class allows writes runs
/// (`risk::allows_writes`); a page load whose URL names a handler that changes state
/// (`/item/3/delete`, `?action=logout`: `risk::class_of_url`) only while an action of that
/// class or above runs, so a script that navigates there is held to it too.
///
/// A write the page sends on its own is told apart and charged to no action: one the page's
/// script marked as sent outside any real input (`init.js`: from a timer no input set going,
/// or long after the last input; the [`BACKGROUND_HEADER`]), a beacon, one sent between
/// actions, and one to the same handler as such a write before (a heartbeat that repeats).
/// They are refused like any other write the action's class does not allow, whatever the
/// class (a page's own write is never the user's), and counted apart. A session refresh
/// (`forager_protocol::risk::keeps_session`) is let through at every class.
#[derive(Debug)]
pub(super) struct WriteGate {
    pub(super) class: forager_protocol::RiskClass,
    /// Whether an action runs now.
    pub(super) acting: bool,
    /// The URL of the page the running action was taken on: a write it sends to another
    /// record than this page's is refused (`risk::writes_another_record`).
    pub(super) page: String,
    pub(super) refused: Vec<Refused>,
    /// The handlers (method and digit-masked path) the page wrote to on its own.
    pub(super) background: BTreeSet<(String, String)>,
}

impl Default for WriteGate {
    fn default() -> Self {
        WriteGate {
            class: forager_protocol::RiskClass::ReadOnly,
            acting: false,
            page: String::new(),
            refused: Vec::new(),
            background: BTreeSet::new(),
        }
    }
}

/// The header `init.js` puts on a write the page's script sends outside any real input. A
/// request that carries it is refused, so it never reaches a server (a page that sets it
/// itself only has its own write refused).
pub const BACKGROUND_HEADER: &str = "x-forager-background";

/// A write's handler as the gate remembers it: the method and the URL's path, digits masked
/// (`POST /admin/editing-sessions/ping/#/`).
pub(super) fn handler_of(method: &str, url: &str) -> (String, String) {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_owned())
        .unwrap_or_default();
    let mut masked = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_ascii_digit() {
            if !masked.ends_with('#') {
                masked.push('#');
            }
        } else {
            masked.push(c);
        }
    }
    (method.to_ascii_uppercase(), masked)
}

/// A write the gate refused while an action ran, and what it showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Its method.
    pub method: String,
    /// Its URL.
    pub url: String,
    /// What its handler and body say it does (`risk::class_of_write`), when they say.
    pub does: Option<forager_protocol::RiskClass>,
    /// Whether it went to another record than the action's page names.
    pub elsewhere: bool,
}

impl WriteGate {
    /// Whether a request may leave while the gate stands at its class. A write leaves only
    /// when the class allows writes, what its handler and `body` say it does is within the
    /// class (a "Save" whose form deletes is not), and it goes to the record the action's
    /// page names, if the page names one.
    /// `does`: what the write's handler and body say it does (`risk::class_of_write`).
    pub(super) fn lets_through(
        &self,
        method: &str,
        url: &str,
        document: bool,
        does: Option<forager_protocol::RiskClass>,
    ) -> bool {
        use forager_protocol::risk::{allows_writes, class_of_url};
        if writes(method) {
            return allows_writes(self.class)
                && does.is_none_or(|class| class <= self.class)
                && !self.elsewhere(url);
        }
        !document || class_of_url(url).is_none_or(|class| class <= self.class)
    }

    /// Whether a write to `url` goes to another record than the running action's page.
    pub(super) fn elsewhere(&self, url: &str) -> bool {
        self.acting && forager_protocol::risk::writes_another_record(&self.page, url)
    }

    /// Whether a write is one the page sent on its own: marked so by the page's script, a
    /// beacon, sent while no action runs, or to a handler such a write went to before.
    pub(super) fn sent_on_its_own(
        &self,
        method: &str,
        url: &str,
        marked: bool,
        beacon: bool,
    ) -> bool {
        marked || beacon || !self.acting || self.background.contains(&handler_of(method, url))
    }
}

/// Most refused writes a gate keeps between two looks.
pub(super) const MAX_REFUSED_KEPT: usize = 20;

/// Whether a request method writes.
pub(super) fn writes(method: &str) -> bool {
    !["GET", "HEAD", "OPTIONS"]
        .iter()
        .any(|m| method.eq_ignore_ascii_case(m))
}

impl NetworkLog {
    /// The result document's form of it.
    pub fn summary(&self) -> forager_protocol::result::NetworkSummary {
        forager_protocol::result::NetworkSummary {
            allowed_requests: self.allowed,
            allowed_origins: self.allowed_origins.iter().cloned().collect(),
            blocked_requests: self.blocked,
            blocked_urls: self.blocked_urls.clone(),
            refused_writes: self.refused_writes,
            refused_write_requests: self.refused_write_requests.clone(),
            background_refused: self.background_refused,
            background_requests: self.background_requests.clone(),
            view_state_refused: self.view_state_refused,
        }
    }
}
