//! Roles and names from Chromium's accessibility tree: what a screen reader hears, computed by
//! the browser (the accessible-name algorithm in full: `aria-labelledby` through hidden
//! elements, CSS generated content, `aria-hidden` text left out, shadow roots and frames), in
//! place of the page script's approximation.
//!
//! `observe.js` keeps the DOM elements behind its `elements` in its world (OBSERVED); this
//! module takes a handle to that list (`Runtime.evaluate` returning an object), lists its
//! entries (`Runtime.getProperties`), and asks the tree for each entry's node
//! (`Accessibility.getPartialAXTree` without relatives, all at once), then releases the
//! handles. An element the tree ignores, or names with nothing, keeps the script's name (an
//! icon's class words, a field's loose label: what the tree cannot know); a role outside
//! [`KNOWN_ROLES`] (a `generic` box, a list item) keeps the script's role. The locators keep
//! the script's names: they are how `act.js` finds the element again.
//!
//! The tab keeps each document's readings by element (CSS path, the script's role and name:
//! [`NameCache`]), so a second look at a page asks the tree only about elements it has not
//! seen, and it never asks about clickables that are no controls ([`worth_asking`]); the
//! browser bench measures a first look and a second.
//!
//! The tree is an enrichment: when a call fails or times out the observation keeps the script's
//! names, and says so in the log.

use super::{EvaluateParams, Raw, Tab, timed};
use forager_protocol::observation::Element;
use serde::Deserialize;

/// Where `observe.js` leaves the elements it described.
const OBSERVED: &str = "window[Symbol.for('forager.observed')]";

/// The handles taken for one reading, released together.
const GROUP: &str = "forager-accessibility";

/// The tree's roles forager's eyes act on; another role leaves the script's in place.
pub(crate) const KNOWN_ROLES: &[&str] = &[
    "button",
    "checkbox",
    "combobox",
    "link",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "textbox",
    "treeitem",
];

/// The most one reading may take: a page of tens of thousands of elements builds its whole tree
/// on the first question, and the page script's names are there already.
const READING_BUDGET: std::time::Duration = std::time::Duration::from_millis(1500);

/// As long as the script's names may be (`prelude.js` clips at 160 characters).
const MAX_NAME_CHARS: usize = 160;

/// One element's reading from the tree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Accessible {
    pub role: String,
    pub name: String,
    pub ignored: bool,
}

#[derive(Debug, Deserialize)]
struct AxValue {
    #[serde(default)]
    value: serde_json::Value,
}

#[derive(Debug, Deserialize)]
struct AxNode {
    #[serde(default)]
    ignored: bool,
    role: Option<AxValue>,
    name: Option<AxValue>,
}

impl Accessible {
    /// The first node of a `getPartialAXTree` answer: the element's own (relatives were not
    /// asked for).
    fn from_answer(answer: &serde_json::Value) -> Option<Accessible> {
        let node = answer.get("nodes")?.as_array()?.first()?;
        let node: AxNode = serde_json::from_value(node.clone()).ok()?;
        let text = |v: &Option<AxValue>| {
            v.as_ref()
                .and_then(|v| v.value.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        Some(Accessible {
            role: text(&node.role),
            name: text(&node.name),
            ignored: node.ignored,
        })
    }

    /// Puts what the tree knows into `element`: its name where the tree has one, its role
    /// where the tree's is one forager acts on. Returns whether anything changed.
    pub(crate) fn apply(&self, element: &mut Element) -> bool {
        if self.ignored {
            return false;
        }
        let mut changed = false;
        let name = clip(&self.name);
        if !name.is_empty() && name != element.name {
            element.name = name;
            changed = true;
        }
        if KNOWN_ROLES.contains(&self.role.as_str()) && self.role != element.role {
            element.role = self.role.clone();
            changed = true;
        }
        changed
    }
}

/// Whitespace folded and cut as the script cuts its names.
fn clip(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_NAME_CHARS)
        .collect()
}

/// An element as the page script saw it: its CSS path, role and name. The same key in the same
/// document is the same reading (a name the tree computes differently has a cause the script
/// sees too: new text, a new label, another class).
type ElementKey = (String, String, String);

fn key_of(element: &Element) -> ElementKey {
    let path = element
        .locators
        .iter()
        .find_map(|l| match l {
            forager_protocol::Locator::Css(css) => Some(css.clone()),
            _ => None,
        })
        .unwrap_or_default();
    (path, element.role.clone(), element.name.clone())
}

/// The readings of one document's elements, so that a second look at a page asks the tree
/// only about what is new. Emptied when the document changes; bounded.
#[derive(Debug, Default)]
pub(crate) struct NameCache {
    document: String,
    readings: std::collections::HashMap<ElementKey, Option<Accessible>>,
    /// A reading of this document failed or ran out of time: it is not asked again (a page too
    /// big for the tree's budget stays too big), and the script's names stand.
    gave_up: bool,
}

/// The most readings kept for one document (a page that keeps making new elements).
const MAX_CACHED: usize = 4000;

impl NameCache {
    /// The indices of `elements` the cache has no reading for, after switching to `document`.
    fn missing(&mut self, document: &str, elements: &[Element]) -> Vec<usize> {
        if self.document != document || self.readings.len() > MAX_CACHED {
            self.document = document.to_owned();
            self.readings.clear();
            self.gave_up = false;
        }
        if self.gave_up {
            return Vec::new();
        }
        (0..elements.len())
            .filter(|&i| worth_asking(&elements[i]))
            .filter(|&i| !self.readings.contains_key(&key_of(&elements[i])))
            .collect()
    }
}

/// Whether the tree can say more of an element than the page script did. Not of a clickable
/// that is no control (a `<div>` the page listens to): the tree makes it a `generic` node,
/// whose name may come only from `aria-label`, `aria-labelledby` or `title`, which the script
/// reads too. Asking about those costs a call each (a list of clickable rows is most of a page)
/// and changes nothing.
fn worth_asking(element: &Element) -> bool {
    element.role != "clickable"
}

impl Tab {
    /// Reads the tree for the elements the last `observe.js` described (those of `document`
    /// the tab has not read yet) and puts its roles and names into `elements` (same order).
    /// Leaves them as they are where the tree cannot be read.
    pub(super) async fn name_from_accessibility(&self, document: &str, elements: &mut [Element]) {
        if elements.is_empty() {
            return;
        }
        let keys: Vec<ElementKey> = elements.iter().map(key_of).collect();
        let missing = match self.names.lock() {
            Ok(mut cache) => cache.missing(document, elements),
            Err(_) => (0..elements.len()).collect(),
        };
        if !missing.is_empty() {
            match self.accessible(elements.len(), &missing).await {
                Ok(readings) => {
                    if let Ok(mut cache) = self.names.lock() {
                        for (index, reading) in missing.iter().zip(readings) {
                            cache.readings.insert(keys[*index].clone(), reading);
                        }
                    }
                }
                Err(error) => {
                    tracing::debug!(%error, "the accessibility tree was not read; the page script's names stay");
                    if let Ok(mut cache) = self.names.lock() {
                        cache.gave_up = true;
                    }
                    return;
                }
            }
        }
        let Ok(cache) = self.names.lock() else {
            return;
        };
        let mut changed = 0;
        for (element, key) in elements.iter_mut().zip(&keys) {
            if let Some(Some(reading)) = cache.readings.get(key)
                && reading.apply(element)
            {
                changed += 1;
            }
        }
        tracing::trace!(
            changed,
            asked = missing.len(),
            "roles and names from the accessibility tree"
        );
    }

    /// The tree's reading of each of the `wanted` observed elements (indices below `count`),
    /// in that order (`None` where the tree has no node for one).
    async fn accessible(
        &self,
        count: usize,
        wanted: &[usize],
    ) -> Result<Vec<Option<Accessible>>, crate::environment::EnvError> {
        let limit = self.timeouts.call;
        let context_id = self.isolated_context().await?;
        let list = Raw {
            method: "Runtime.evaluate",
            params: EvaluateParams {
                expression: OBSERVED.to_owned(),
                context_id,
                return_by_value: false,
                await_promise: false,
                timeout: limit.as_millis() as f64,
                object_group: Some(GROUP),
            },
        };
        let list = timed("take the observed elements", limit, self.page.execute(list)).await?;
        let readings = match list
            .result
            .pointer("/result/objectId")
            .and_then(|v| v.as_str())
        {
            Some(list_id) => {
                match tokio::time::timeout(
                    READING_BUDGET,
                    self.read_entries(list_id, count, wanted),
                )
                .await
                {
                    Ok(readings) => readings,
                    Err(_) => Err(crate::environment::EnvError::Timeout {
                        operation: "read the accessibility tree",
                        after_ms: READING_BUDGET.as_millis() as u64,
                    }),
                }
            }
            None => Ok(vec![None; wanted.len()]),
        };
        let release = Raw {
            method: "Runtime.releaseObjectGroup",
            params: serde_json::json!({ "objectGroup": GROUP }),
        };
        if let Err(error) = timed("release handles", limit, self.page.execute(release)).await {
            tracing::debug!(%error, "handles of an accessibility reading were not released");
        }
        readings
    }

    async fn read_entries(
        &self,
        list_id: &str,
        count: usize,
        wanted: &[usize],
    ) -> Result<Vec<Option<Accessible>>, crate::environment::EnvError> {
        let limit = self.timeouts.call;
        let entries = Raw {
            method: "Runtime.getProperties",
            params: serde_json::json!({ "objectId": list_id, "ownProperties": true }),
        };
        let entries = timed(
            "list the observed elements",
            limit,
            self.page.execute(entries),
        )
        .await?;
        let mut handles: Vec<Option<String>> = vec![None; count];
        for entry in entries
            .result
            .get("result")
            .and_then(|r| r.as_array())
            .into_iter()
            .flatten()
        {
            let index = entry
                .get("name")
                .and_then(|n| n.as_str())
                .and_then(|n| n.parse::<usize>().ok());
            let handle = entry.pointer("/value/objectId").and_then(|v| v.as_str());
            if let (Some(index), Some(handle)) = (index, handle)
                && index < count
            {
                handles[index] = Some(handle.to_owned());
            }
        }
        let reads = wanted.iter().map(|&index| {
            let handle = handles.get(index).cloned().flatten();
            async move {
                let handle = handle?;
                let ask = Raw {
                    method: "Accessibility.getPartialAXTree",
                    params: serde_json::json!({ "objectId": handle, "fetchRelatives": false }),
                };
                let answer = timed("read the accessibility tree", limit, self.page.execute(ask))
                    .await
                    .ok()?;
                Accessible::from_answer(&answer.result)
            }
        });
        Ok(futures::future::join_all(reads).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(role: &str, name: &str) -> Element {
        crate::testing::control(role, name, "")
    }

    #[test]
    fn the_trees_name_and_known_role_replace_the_scripts() {
        let answer = serde_json::json!({ "nodes": [{
            "nodeId": "7", "ignored": false,
            "role": { "type": "role", "value": "spinbutton" },
            "name": { "type": "computedString", "value": "  Quantity\n of  items " },
        }]});
        let reading = Accessible::from_answer(&answer).expect("a node");
        let mut field = element("textbox", "qty");
        assert!(reading.apply(&mut field));
        assert_eq!(
            (field.role.as_str(), field.name.as_str()),
            ("spinbutton", "Quantity of items")
        );
    }

    #[test]
    fn an_ignored_node_an_empty_name_or_an_unknown_role_keep_the_scripts() {
        let ignored = serde_json::json!({ "nodes": [{ "ignored": true,
            "role": { "value": "button" }, "name": { "value": "Other" } }]});
        let mut e = element("button", "Save");
        assert!(
            !Accessible::from_answer(&ignored)
                .expect("a node")
                .apply(&mut e)
        );
        assert_eq!(e, element("button", "Save"));

        let generic = serde_json::json!({ "nodes": [{ "ignored": false,
            "role": { "value": "generic" }, "name": { "value": "" } }]});
        let mut e = element("", "trash");
        assert!(
            !Accessible::from_answer(&generic)
                .expect("a node")
                .apply(&mut e)
        );
        assert_eq!(e, element("", "trash"));
    }

    #[test]
    fn a_malformed_answer_reads_as_nothing() {
        for answer in [
            serde_json::json!({}),
            serde_json::json!({ "nodes": [] }),
            serde_json::json!({ "nodes": "x" }),
            serde_json::json!({ "nodes": [{ "ignored": "yes" }] }),
        ] {
            assert_eq!(Accessible::from_answer(&answer), None, "{answer}");
        }
    }

    #[test]
    fn a_second_look_at_a_document_asks_only_about_new_elements() {
        let mut cache = NameCache::default();
        let page = vec![element("button", "Save"), element("link", "Help")];
        assert_eq!(cache.missing("doc-a", &page), vec![0, 1]);
        for e in &page {
            cache.readings.insert(key_of(e), None);
        }
        let grown = vec![
            element("button", "Save"),
            element("link", "Help"),
            element("button", "Undo"),
        ];
        assert_eq!(cache.missing("doc-a", &grown), vec![2]);
        cache.gave_up = true;
        assert!(
            cache.missing("doc-a", &grown).is_empty(),
            "a document whose reading failed is not asked again"
        );
        assert_eq!(
            cache.missing("doc-b", &grown),
            vec![0, 1, 2],
            "another document starts afresh"
        );
    }

    #[test]
    fn clickables_that_are_no_controls_are_not_asked_about() {
        let mut cache = NameCache::default();
        let page = vec![
            element("clickable", "row 1"),
            element("button", "Book"),
            element("clickable", "row 2"),
        ];
        assert_eq!(cache.missing("doc", &page), vec![1]);
    }

    #[test]
    fn names_are_cut_as_the_scripts_are() {
        let long = "word ".repeat(100);
        assert_eq!(clip(&long).chars().count(), MAX_NAME_CHARS);
    }
}
