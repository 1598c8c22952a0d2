//! The synthetic website generator.
//!
//! A *family* is one site skeleton (sections, a page tree, cross links, labels) drawn from a
//! family seed; each generated *site* of the family is that skeleton with its own goal page and
//! its own traps: decoy links whose text resembles the goal, forms on the goal path that need
//! the right input, irreversible actions (risk classes 4–7), sometimes an auth wall in front of
//! the goal's section, per-action latency and cost, and a nondeterminism rate. Sites of one
//! family share their routes, which is what the replay bonus can learn from.
//!
//! Every site knows its optimal path length: a breadth-first search over (page, logged in)
//! states using only actions at or under the default risk ceiling, without glitches.
//!
//! Action labels are classified by `forager_protocol::risk`, the classifier the browser uses. A
//! site's lookup tables ([`SiteTables`]) live with the site, which its environment reads.

use forager_node::embed::{action_key, text_features, text_similarity};
use forager_node::environment::Candidate;
use forager_protocol::action::ActionShape;
use forager_protocol::risk::{self, RiskContext};
use forager_protocol::{Fingerprint, RiskClass};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of the generator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SiteParams {
    /// Pages in the family skeleton (before decoys and special pages).
    pub pages: u32,
    /// Links on a typical page (children, navigation, cross links).
    pub links_per_page: u32,
    /// Depth of the goal page in the page tree.
    pub goal_depth: u32,
    /// Decoy links whose label resembles the goal, each leading into a dead-end subtree.
    pub decoys: u32,
    /// Forms on the goal path that need the right input value.
    pub forms: u32,
    /// Irreversible actions (risk classes 4–7); half of them on the goal path, with goal words.
    pub irreversible: u32,
    /// Probability that the goal's section sits behind a login.
    pub auth_wall_rate: f64,
    /// Mean latency of an action, in milliseconds.
    pub latency_ms: u32,
    /// Latency spread, in milliseconds (uniform ±).
    pub latency_jitter_ms: u32,
    /// Probability that an action lands on a transient error page instead of its target.
    pub nondeterminism: f64,
    /// Sites per family.
    pub family_size: u32,
    /// Probability of a risky shortcut: a class-3 "Save … to my list" button on the goal's
    /// section page that skips one step, against the read-only route.
    pub shortcut_rate: f64,
}

impl Default for SiteParams {
    fn default() -> Self {
        SiteParams {
            pages: 1000,
            links_per_page: 12,
            goal_depth: 4,
            decoys: 6,
            forms: 1,
            irreversible: 4,
            auth_wall_rate: 0.25,
            latency_ms: 50,
            latency_jitter_ms: 20,
            nondeterminism: 0.01,
            family_size: 5,
            shortcut_rate: 0.3,
        }
    }
}

/// A bad parameter, named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid site parameter `{field}`: {reason}")]
pub struct ParamError {
    /// The parameter.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

impl SiteParams {
    /// Checks ranges; the error names the parameter.
    pub fn validate(&self) -> Result<(), ParamError> {
        let bad = |field, reason: String| Err(ParamError { field, reason });
        if !(4..=100_000).contains(&self.pages) {
            return bad("pages", format!("{} is outside 4..=100000", self.pages));
        }
        if !(3..=64).contains(&self.links_per_page) {
            return bad(
                "links_per_page",
                format!("{} is outside 3..=64", self.links_per_page),
            );
        }
        if !(1..=32).contains(&self.goal_depth) {
            return bad(
                "goal_depth",
                format!("{} is outside 1..=32", self.goal_depth),
            );
        }
        if self.decoys > 1000 || self.irreversible > 1000 || self.forms > self.goal_depth {
            return bad(
                "decoys/irreversible/forms",
                "decoys and irreversible at most 1000, forms at most goal_depth".into(),
            );
        }
        for (field, p) in [
            ("auth_wall_rate", self.auth_wall_rate),
            ("nondeterminism", self.nondeterminism),
            ("shortcut_rate", self.shortcut_rate),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return bad(field, format!("{p} is not a probability"));
            }
        }
        if self.family_size == 0 {
            return bad("family_size", "must be at least 1".into());
        }
        Ok(())
    }
}

/// What a page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// An ordinary page.
    Normal,
    /// Part of a decoy subtree.
    Decoy,
    /// A login form.
    Login,
    /// A form's "no results" / validation error page.
    FormError,
    /// The page after an irreversible action.
    Confirmation,
    /// The transient error page nondeterminism lands on.
    Glitch,
}

/// A page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Title (and the text the value hint reads).
    pub title: String,
    /// The URL path.
    pub path: String,
    /// What it is.
    pub kind: PageKind,
    /// Depth in the skeleton's page tree (0 for home).
    pub depth: u32,
    /// Whether visiting it needs a login.
    pub protected: bool,
    /// Latency factor of actions that land here (slow sections cost more).
    pub slowness: f64,
    /// Actions available, as indices into [`Site::actions`].
    pub actions: Vec<u32>,
}

/// What an action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Go to a page (through the login page if it is protected and the session is not).
    Link(u32),
    /// Fill a field with input `input` and submit: to `to` if it is the right input, else to
    /// `error`.
    Form {
        /// The input typed.
        input: u32,
        /// Whether it is the input the form needs.
        correct: bool,
        /// Where the right input leads.
        to: u32,
        /// Where a wrong one leads.
        error: u32,
    },
    /// Log in and continue to a page.
    Login(u32),
    /// Log out and go home.
    Logout,
    /// An irreversible action landing on a confirmation page.
    Irreversible(u32),
}

/// An action definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionDef {
    /// What a user reads.
    pub label: String,
    /// ARIA role of the control.
    pub role: &'static str,
    /// What it does.
    pub effect: Effect,
    /// Its risk class, from the protocol's classifier.
    pub risk: RiskClass,
    /// The policy prior (similarity of the label to the goal), before normalisation.
    pub affinity: f64,
    /// Stable key of the label, for the replay bonus.
    pub key: u64,
}

/// One generated site with one task on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// Which family (sites of a family share a skeleton).
    pub family: u64,
    /// Index of the site in its batch.
    pub index: u64,
    /// The goal text.
    pub goal: String,
    /// The goal page.
    pub goal_page: u32,
    /// Input values the task offers, by name.
    pub inputs: Vec<(String, String)>,
    /// All pages; 0 is home.
    pub pages: Vec<Page>,
    /// All actions.
    pub actions: Vec<ActionDef>,
    /// The transient error page.
    pub glitch_page: u32,
    /// The login page, when the goal's section is behind one.
    pub login_page: Option<u32>,
    /// Parameters it was made with.
    pub params: SiteParams,
    /// Seed of this site's nondeterminism and latency.
    pub seed: u64,
    /// Shortest successful path using actions at or under the default ceiling.
    pub optimal_actions: Option<u32>,
    /// The lookup tables environments on this site read, built once (see [`Site::tables`]).
    tables: std::sync::OnceLock<std::sync::Arc<SiteTables>>,
}

const SECTIONS: &[&str] = &[
    "Catalogue",
    "Support",
    "Journal",
    "Company",
    "Community",
    "Resources",
    "Services",
    "Events",
    "Careers",
    "Press",
    "Partners",
    "Library",
];

const SYLLABLES: &[&str] = &[
    "ka", "zor", "bel", "tri", "mon", "vex", "lu", "sar", "quin", "dra", "pel", "fio", "gam",
    "ster", "nox", "ral", "tem", "wy", "cal", "bri", "dun", "hol", "ixi", "jor",
];

fn word(rng: &mut ChaCha8Rng) -> String {
    let n = rng.random_range(2..=3);
    let mut w = String::new();
    for _ in 0..n {
        w.push_str(SYLLABLES[rng.random_range(0..SYLLABLES.len())]);
    }
    w
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Input names a task may offer, with a field label that needs each (text-similar or not).
const FORM_FIELDS: &[(&str, &str)] = &[
    ("postcode", "Postcode"),
    ("email", "Email address"),
    ("order_number", "Order number"),
    ("member_id", "Membership card"),
    ("coupon", "Voucher"),
    ("surname", "Family name"),
];

const FAR_AWAY_TRAPS: &[&str] = &[
    "Delete account",
    "Change password",
    "Post a comment",
    "Pay outstanding invoice",
    "Close account",
    "Send feedback",
];

struct Builder {
    rng: ChaCha8Rng,
    pages: Vec<Page>,
    actions: Vec<ActionDef>,
}

impl Builder {
    fn page(&mut self, title: String, path: String, kind: PageKind, depth: u32) -> u32 {
        self.pages.push(Page {
            title,
            path,
            kind,
            depth,
            protected: false,
            slowness: 1.0,
            actions: Vec::new(),
        });
        (self.pages.len() - 1) as u32
    }

    fn action(&mut self, from: u32, label: String, role: &'static str, effect: Effect) -> u32 {
        let shape = match effect {
            Effect::Form { .. } | Effect::Login(_) => ActionShape::Fill { enter: true },
            _ => ActionShape::Click,
        };
        let (form_submit, posts, input_type) = match effect {
            Effect::Form { .. } => (Some("Search"), false, "text"),
            Effect::Login(_) => (Some("Log in"), true, "password"),
            _ => (None, false, ""),
        };
        let risk = risk::classify(
            shape,
            &RiskContext {
                accessible_name: &label,
                role,
                input_type,
                form_submit_name: form_submit,
                form_posts: posts,
                dialog_text: "",
                sends: None,
            },
        );
        self.actions.push(ActionDef {
            key: action_key(&label),
            label,
            role,
            effect,
            risk,
            affinity: 0.0,
        });
        let id = (self.actions.len() - 1) as u32;
        self.pages[from as usize].actions.push(id);
        id
    }
}

/// The skeleton shared by a family.
struct Skeleton {
    pages: Vec<Page>,
    actions: Vec<ActionDef>,
    parent: Vec<Option<u32>>,
    children: Vec<Vec<u32>>,
    /// The family's favourite section: most goals of the family lie below it.
    main_section: u32,
}

fn skeleton(params: &SiteParams, family_seed: u64) -> Skeleton {
    let mut b = Builder {
        rng: ChaCha8Rng::seed_from_u64(family_seed ^ 0x5ce1_e70d),
        pages: Vec::new(),
        actions: Vec::new(),
    };
    let home = b.page("Home".into(), "/".into(), PageKind::Normal, 0);
    let mut parent: Vec<Option<u32>> = vec![None];
    let mut children: Vec<Vec<u32>> = vec![Vec::new()];
    // Sections under home, then a page tree with 1 to `links_per_page - 2` children per page
    // (random), filled breadth-first until the page budget is spent.
    let max_children = params.links_per_page.saturating_sub(2).max(1);
    let sections = max_children.min(SECTIONS.len() as u32);
    let mut frontier: VecDeque<u32> = VecDeque::new();
    let offset = b.rng.random_range(0..SECTIONS.len());
    for s in 0..sections {
        let name = SECTIONS[(offset + s as usize) % SECTIONS.len()];
        let id = b.page(
            name.into(),
            format!("/{}", name.to_lowercase()),
            PageKind::Normal,
            1,
        );
        parent.push(Some(home));
        children.push(Vec::new());
        children[home as usize].push(id);
        frontier.push_back(id);
    }
    // The family word of each depth-2 subtree is inherited by its pages, as product lines are.
    let mut line_word: Vec<Option<String>> = vec![None; b.pages.len()];
    while let Some(p) = frontier.pop_front() {
        if b.pages.len() as u32 >= params.pages {
            break;
        }
        let depth = b.pages[p as usize].depth + 1;
        if depth > params.goal_depth + 1 {
            continue;
        }
        let count = b.rng.random_range(1..=max_children);
        for _ in 0..count {
            if b.pages.len() as u32 >= params.pages {
                break;
            }
            let own = word(&mut b.rng);
            let line = line_word[p as usize].clone();
            let (title, line_for_child) = match line {
                Some(line) => (
                    format!("{} {}", capitalised(&line), capitalised(&own)),
                    Some(line),
                ),
                None => (format!("{} range", capitalised(&own)), Some(own.clone())),
            };
            let path = format!("{}/{}", b.pages[p as usize].path.trim_end_matches('/'), own);
            let id = b.page(title, path, PageKind::Normal, depth);
            parent.push(Some(p));
            children.push(Vec::new());
            line_word.push(line_for_child);
            children[p as usize].push(id);
            frontier.push_back(id);
        }
    }
    // One slow section: its pages cost four times as much to reach.
    let slow_section = children[home as usize][b.rng.random_range(0..sections as usize)];
    for id in 0..b.pages.len() {
        let mut cursor = Some(id as u32);
        while let Some(c) = cursor {
            if c == slow_section {
                b.pages[id].slowness = 4.0;
            }
            cursor = parent[c as usize];
        }
    }
    let main_section = children[home as usize][b.rng.random_range(0..sections as usize)];
    Skeleton {
        pages: b.pages,
        actions: b.actions,
        parent,
        children,
        main_section,
    }
}

/// Whether page `id` lies in the subtree of `section` (by the skeleton's parents).
fn within(parent: &[Option<u32>], id: u32, section: u32) -> bool {
    let mut cursor = Some(id);
    while let Some(c) = cursor {
        if c == section {
            return true;
        }
        cursor = parent[c as usize];
    }
    false
}

/// Where the goal is, and the task's inputs, decided before the site's links are made.
struct Plan {
    goal_title: String,
    /// Home … goal, by the skeleton's tree.
    goal_path: Vec<u32>,
    /// The root of the login-walled subtree, if any.
    protected_root: Option<u32>,
    /// The goal path's steps (indices) that are forms rather than links.
    forms: Vec<usize>,
    /// The form fields ([`FORM_FIELDS`] indices) of the task's inputs.
    used_fields: Vec<usize>,
    inputs: Vec<(String, String)>,
}

/// Generates site `index` of a batch: family `index / family_size` of the batch seed.
pub fn generate(params: &SiteParams, batch_seed: u64, index: u64) -> Result<Site, ParamError> {
    params.validate()?;
    let family = batch_seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(index / u64::from(params.family_size));
    let skeleton = skeleton(params, family);
    let site_seed = family ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 0xa5a5;
    let mut b = Builder {
        rng: ChaCha8Rng::seed_from_u64(site_seed),
        pages: skeleton.pages,
        actions: skeleton.actions,
    };
    let parent = skeleton.parent;
    let children = skeleton.children;
    let skeleton_pages = b.pages.len() as u32;
    // The order below is the random stream's: a change of it changes every site.
    let (goal_page, goal_path) = b.choose_goal(params, &parent, skeleton.main_section);
    let goal_title = b.pages[goal_page as usize].title.clone();
    let goal = format!("Open the {goal_title} page");
    let glitch_page = b.page(
        "503 Service Unavailable".into(),
        "/503".into(),
        PageKind::Glitch,
        0,
    );
    let plan = b.plan(params, &parent, goal_title, goal_path);
    b.link_skeleton(params, &parent, &children, &plan);
    let login_page = b.login(&plan, skeleton_pages);
    b.decoys(params, &plan.goal_title, skeleton_pages);
    b.irreversible(params, &plan, skeleton_pages);
    // A risky shortcut: a draft write that skips a step of the read-only route.
    if plan.goal_path.len() > 3 && b.rng.random_bool(params.shortcut_rate) {
        let label = format!("Save {} to my list", plan.goal_title);
        b.action(
            plan.goal_path[1],
            label,
            "button",
            Effect::Link(plan.goal_path[3]),
        );
    }
    // Glitch page: a retry link home.
    b.action(glitch_page, "Home".into(), "link", Effect::Link(HOME));
    set_priors(&mut b.actions, &goal, &plan.inputs);
    let mut site = Site {
        family,
        index,
        goal,
        goal_page,
        inputs: plan.inputs,
        pages: b.pages,
        actions: b.actions,
        glitch_page,
        login_page,
        params: params.clone(),
        seed: site_seed,
        optimal_actions: None,
        tables: std::sync::OnceLock::new(),
    };
    site.optimal_actions = site.shortest_path(RiskClass::DEFAULT_CEILING);
    Ok(site)
}

/// The home page's id.
const HOME: u32 = 0;

impl Builder {
    /// The goal: a page at the goal depth, usually under the family's main section; and the
    /// path to it.
    fn choose_goal(
        &mut self,
        params: &SiteParams,
        parent: &[Option<u32>],
        main_section: u32,
    ) -> (u32, Vec<u32>) {
        let skeleton_pages = self.pages.len() as u32;
        let at_depth: Vec<u32> = (0..skeleton_pages)
            .filter(|&p| self.pages[p as usize].depth == params.goal_depth)
            .collect();
        let preferred: Vec<u32> = at_depth
            .iter()
            .copied()
            .filter(|&p| within(parent, p, main_section))
            .collect();
        let pool = if !preferred.is_empty() && self.rng.random_bool(0.7) {
            preferred
        } else {
            at_depth
        };
        let goal_page = if pool.is_empty() {
            // Too few pages for the requested depth: the deepest page will do.
            (0..skeleton_pages)
                .max_by_key(|&p| self.pages[p as usize].depth)
                .unwrap_or(0)
        } else {
            pool[self.rng.random_range(0..pool.len())]
        };
        let mut goal_path = vec![goal_page];
        while let Some(p) = parent[*goal_path.last().unwrap_or(&0) as usize] {
            goal_path.push(p);
        }
        goal_path.reverse();
        (goal_page, goal_path)
    }

    /// The auth wall over the goal's depth-2 subtree, the goal path's forms and the task's
    /// three inputs.
    fn plan(
        &mut self,
        params: &SiteParams,
        parent: &[Option<u32>],
        goal_title: String,
        goal_path: Vec<u32>,
    ) -> Plan {
        let protected_root = (self.rng.random_bool(params.auth_wall_rate) && goal_path.len() > 2)
            .then(|| goal_path[2]);
        if let Some(root) = protected_root {
            // Only the skeleton's pages: the glitch page is past them.
            for id in 0..parent.len() as u32 {
                if within(parent, id, root) {
                    self.pages[id as usize].protected = true;
                }
            }
        }
        // Forms on the goal path replace the link to the next page.
        let mut form_steps: Vec<usize> = (0..goal_path.len().saturating_sub(1)).collect();
        let mut forms = Vec::new();
        for _ in 0..params.forms.min(form_steps.len() as u32) {
            let i = self.rng.random_range(0..form_steps.len());
            forms.push(form_steps.swap_remove(i));
        }
        // The task offers three inputs; a form needs one of them, under a label that may or
        // may not resemble the input's name.
        let mut fields: Vec<usize> = (0..FORM_FIELDS.len()).collect();
        let mut used_fields = Vec::new();
        let mut inputs: Vec<(String, String)> = Vec::new();
        for _ in 0..3 {
            let n = fields.swap_remove(self.rng.random_range(0..fields.len()));
            let value = format!(
                "{}-{}",
                word(&mut self.rng),
                self.rng.random_range(100..999)
            );
            inputs.push((FORM_FIELDS[n].0.to_owned(), value));
            used_fields.push(n);
        }
        Plan {
            goal_title,
            goal_path,
            protected_root,
            forms,
            used_fields,
            inputs,
        }
    }

    /// Links of the skeleton: children (or, on the goal path, a form), parent, home, cross
    /// links.
    fn link_skeleton(
        &mut self,
        params: &SiteParams,
        parent: &[Option<u32>],
        children: &[Vec<u32>],
        plan: &Plan,
    ) {
        let skeleton_pages = parent.len() as u32;
        for p in 0..skeleton_pages {
            let path_index = plan.goal_path.iter().position(|&g| g == p);
            let form_here = path_index.filter(|i| plan.forms.contains(i));
            for &c in &children[p as usize] {
                let next_on_path = plan.goal_path.get(path_index.unwrap_or(0) + 1) == Some(&c);
                if form_here.is_some() && next_on_path {
                    self.search_form(p, c, plan);
                    continue;
                }
                let title = self.pages[c as usize].title.clone();
                self.action(p, title, "link", Effect::Link(c));
            }
            if p != HOME {
                self.action(p, "Home".into(), "link", Effect::Link(HOME));
                if let Some(up) = parent[p as usize].filter(|&u| u != HOME) {
                    let title = format!("Back to {}", self.pages[up as usize].title);
                    self.action(p, title, "link", Effect::Link(up));
                }
            }
            let crosses = params
                .links_per_page
                .saturating_sub(children[p as usize].len() as u32 + 2);
            for _ in 0..crosses.min(2) {
                let target = self.rng.random_range(1..skeleton_pages);
                // No shortcuts onto the goal path: the designed depth stays the optimum.
                if plan.goal_path.contains(&target) || target == p {
                    continue;
                }
                let title = self.pages[target as usize].title.clone();
                self.action(p, title, "link", Effect::Link(target));
            }
        }
    }

    /// The way forward from `p` to `c` as a search form that needs one of the task's inputs
    /// (a field per input, one correct), with its error page.
    fn search_form(&mut self, p: u32, c: u32, plan: &Plan) {
        let field = plan.used_fields[self.rng.random_range(0..plan.used_fields.len())];
        let (input_name, field_label) = FORM_FIELDS[field];
        let error = self.page(
            format!("No results for your {field_label}"),
            format!("{}?error", self.pages[p as usize].path),
            PageKind::FormError,
            self.pages[p as usize].depth,
        );
        self.action(error, "Home".into(), "link", Effect::Link(HOME));
        self.action(error, "Back".into(), "link", Effect::Link(p));
        for (k, (name, _)) in plan.inputs.iter().enumerate() {
            let label = format!("Search by {field_label} with {name}");
            self.action(
                p,
                label,
                "textbox",
                Effect::Form {
                    input: k as u32,
                    correct: name == input_name,
                    to: c,
                    error,
                },
            );
        }
    }

    /// The login page of the protected section, and a log-out link on its pages.
    fn login(&mut self, plan: &Plan, skeleton_pages: u32) -> Option<u32> {
        let root = plan.protected_root?;
        let login = self.page("Sign in".into(), "/login".into(), PageKind::Login, 0);
        self.action(login, "Home".into(), "link", Effect::Link(HOME));
        self.action(login, "Password".into(), "textbox", Effect::Login(root));
        for id in 0..skeleton_pages {
            if self.pages[id as usize].protected {
                self.action(id, "Log out".into(), "link", Effect::Logout);
            }
        }
        Some(login)
    }

    /// Decoys: links whose label resembles the goal, into dead-end subtrees, placed near the
    /// top, where a greedy walker meets them first.
    fn decoys(&mut self, params: &SiteParams, goal_title: &str, skeleton_pages: u32) {
        let goal_words: Vec<&str> = goal_title.split(' ').collect();
        for d in 0..params.decoys {
            let w = goal_words[d as usize % goal_words.len()];
            let suffix = ["reviews", "accessories", "news", "offers", "archive"][d as usize % 5];
            let title = format!("{goal_title} {suffix}");
            let decoy = self.page(title.clone(), format!("/decoy/{d}"), PageKind::Decoy, 1);
            self.action(decoy, "Home".into(), "link", Effect::Link(HOME));
            for k in 0..2 {
                let child_title = format!("{w} {suffix} {}", word(&mut self.rng));
                let child = self.page(
                    child_title.clone(),
                    format!("/decoy/{d}/{k}"),
                    PageKind::Decoy,
                    2,
                );
                self.action(child, "Home".into(), "link", Effect::Link(HOME));
                self.action(
                    child,
                    format!("Back to {title}"),
                    "link",
                    Effect::Link(decoy),
                );
                self.action(decoy, child_title, "link", Effect::Link(child));
            }
            let from_depth = self.rng.random_range(0..2u32);
            let candidates: Vec<u32> = (0..skeleton_pages)
                .filter(|&p| self.pages[p as usize].depth == from_depth)
                .collect();
            let from = candidates[self.rng.random_range(0..candidates.len())];
            self.action(from, title, "link", Effect::Link(decoy));
        }
    }

    /// Irreversible actions: half on the goal path with goal words, half anywhere.
    fn irreversible(&mut self, params: &SiteParams, plan: &Plan, skeleton_pages: u32) {
        let goal_path = &plan.goal_path;
        for k in 0..params.irreversible {
            let confirmation = self.page(
                "Thank you".into(),
                format!("/done/{k}"),
                PageKind::Confirmation,
                0,
            );
            self.action(confirmation, "Home".into(), "link", Effect::Link(HOME));
            let (from, label) = if k % 2 == 0 && goal_path.len() > 1 {
                let at = goal_path[self.rng.random_range(1..goal_path.len())];
                let verb =
                    ["Buy", "Delete", "Post a review of", "Subscribe to"][(k / 2) as usize % 4];
                (at, format!("{verb} {}", plan.goal_title))
            } else {
                let at = self.rng.random_range(0..skeleton_pages);
                let label = FAR_AWAY_TRAPS[k as usize % FAR_AWAY_TRAPS.len()];
                (at, label.to_owned())
            };
            self.action(from, label, "button", Effect::Irreversible(confirmation));
        }
    }
}

/// Priors: similarity of each label to the goal; for a form, also of the input's name to
/// the field's label (what a policy filling a field reads).
fn set_priors(actions: &mut [ActionDef], goal: &str, inputs: &[(String, String)]) {
    let goal_features = text_features(goal);
    for action in actions {
        let label = text_features(&action.label);
        let mut affinity = f64::from(goal_features.cosine(&label).max(0.0));
        if let Effect::Form { input, .. } = action.effect
            && let Some((name, _)) = inputs.get(input as usize)
        {
            let field = action
                .label
                .trim_start_matches("Search by ")
                .split(" with ")
                .next()
                .unwrap_or("");
            affinity = affinity.max(f64::from(text_similarity(name, field).max(0.0)));
        }
        action.affinity = affinity;
    }
}

/// A state of a simulated site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimState {
    /// The page shown.
    pub page: u32,
    /// Whether the session is logged in.
    pub logged_in: bool,
}

impl Site {
    /// The start state.
    pub fn start(&self) -> SimState {
        SimState {
            page: 0,
            logged_in: false,
        }
    }

    /// Where an action leads, without glitches. `None` if the action is not on the page.
    pub fn transition(&self, state: SimState, action: u32) -> Option<SimState> {
        if !self.pages[state.page as usize].actions.contains(&action) {
            return None;
        }
        Some(self.landing(self.actions[action as usize].effect, state.logged_in))
    }

    /// Where an effect leads from a page of the given session state (wherever that page is).
    fn landing(&self, effect: Effect, logged_in: bool) -> SimState {
        let go = |page: u32, logged_in: bool| {
            if self.pages[page as usize].protected && !logged_in {
                // Redirect to the login page.
                SimState {
                    page: self.login_page.unwrap_or(0),
                    logged_in,
                }
            } else {
                SimState { page, logged_in }
            }
        };
        match effect {
            Effect::Link(to) => go(to, logged_in),
            Effect::Form {
                correct, to, error, ..
            } => {
                if correct {
                    go(to, logged_in)
                } else {
                    SimState {
                        page: error,
                        logged_in,
                    }
                }
            }
            Effect::Login(to) => go(to, true),
            Effect::Logout => SimState {
                page: 0,
                logged_in: false,
            },
            Effect::Irreversible(to) => SimState {
                page: to,
                logged_in,
            },
        }
    }

    /// Whether a state satisfies the task.
    pub fn is_success(&self, state: SimState) -> bool {
        state.page == self.goal_page
    }

    /// Shortest successful path using actions at or under `ceiling`.
    pub fn shortest_path(&self, ceiling: RiskClass) -> Option<u32> {
        let start = self.start();
        let index = |s: SimState| s.page as usize * 2 + usize::from(s.logged_in);
        let mut distance = vec![u32::MAX; self.pages.len() * 2];
        distance[index(start)] = 0;
        let mut queue = VecDeque::from([start]);
        while let Some(state) = queue.pop_front() {
            let d = distance[index(state)];
            if self.is_success(state) {
                return Some(d);
            }
            for &action in &self.pages[state.page as usize].actions {
                if self.actions[action as usize].risk > ceiling {
                    continue;
                }
                if let Some(next) = self.transition(state, action)
                    && distance[index(next)] == u32::MAX
                {
                    distance[index(next)] = d + 1;
                    queue.push_back(next);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_knows_its_optimum() {
        let params = SiteParams::default();
        let a = generate(&params, 7, 3).expect("valid");
        let b = generate(&params, 7, 3).expect("valid");
        assert_eq!(a, b);
        let c = generate(&params, 7, 4).expect("valid");
        assert_ne!(a.goal, c.goal);
        for i in 0..50 {
            let site = generate(&params, 11, i).expect("valid");
            let optimal = site.optimal_actions.expect("every site is solvable");
            // The designed depth, plus one for a login when the goal is behind a wall.
            let walled = site.pages.iter().any(|p| p.kind == PageKind::Login);
            let expected = params.goal_depth + u32::from(walled);
            assert!(
                optimal <= expected && optimal >= params.goal_depth.min(2),
                "site {i}: optimal {optimal}, expected about {expected}"
            );
        }
    }

    #[test]
    fn the_tables_lead_where_the_site_does() {
        let site = generate(&SiteParams::default(), 3, 1).expect("valid");
        let tables = site.tables();
        let pages = site.pages.len() as u32;
        for page in 0..pages {
            for logged_in in [false, true] {
                let state = SimState { page, logged_in };
                // Its own actions, the next page's (not offered here) and one that is nowhere.
                let own = &site.pages[page as usize].actions;
                let other = &site.pages[((page + 1) % pages) as usize].actions;
                let nowhere = site.actions.len() as u32;
                for &action in own.iter().chain(other).chain([&nowhere]) {
                    assert_eq!(
                        tables.transition(&site, state, action),
                        site.transition(state, action),
                        "page {page}, logged in {logged_in}, action {action}"
                    );
                }
            }
        }
    }

    #[test]
    fn families_share_their_skeleton() {
        let params = SiteParams::default();
        let a = generate(&params, 1, 0).expect("valid");
        let b = generate(&params, 1, 1).expect("valid");
        assert_eq!(a.family, b.family);
        assert_eq!(a.pages[1].title, b.pages[1].title);
        let other = generate(&params, 1, u64::from(params.family_size)).expect("valid");
        assert_ne!(a.family, other.family);
    }

    #[test]
    fn traps_are_classified_above_the_default_ceiling() {
        let site = generate(&SiteParams::default(), 3, 0).expect("valid");
        let traps: Vec<&ActionDef> = site
            .actions
            .iter()
            .filter(|a| matches!(a.effect, Effect::Irreversible(_)))
            .collect();
        assert_eq!(traps.len(), 4);
        for trap in traps {
            assert!(trap.risk > RiskClass::DEFAULT_CEILING, "{trap:?}");
        }
        // Links and forms on the way are not.
        for action in &site.actions {
            if matches!(action.effect, Effect::Link(_) | Effect::Form { .. }) {
                assert!(action.risk <= RiskClass::DEFAULT_CEILING, "{action:?}");
            }
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        let bad = SiteParams {
            nondeterminism: 1.5,
            ..SiteParams::default()
        };
        assert_eq!(
            generate(&bad, 0, 0).expect_err("invalid").field,
            "nondeterminism"
        );
        let bad = SiteParams {
            pages: 1,
            ..SiteParams::default()
        };
        assert_eq!(generate(&bad, 0, 0).expect_err("invalid").field, "pages");
    }
}

/// The location hash of a page path, as a browser would hash a URL.
pub fn location_of(path: &str) -> u64 {
    forager_node::embed::stable_hash(path.as_bytes())
}

/// A site's lookup tables, as its environments read them: what every page shows and where
/// every action leads. Built once per site (a sweep runs hundreds of searches on each), by
/// the first environment that asks. Each step reads one page row and one move, each a line
/// or two of memory, rather than the page, the action and its target scattered over the
/// site's structures: cache misses there were a fifth of a search's time.
#[derive(Debug, PartialEq)]
pub struct SiteTables {
    pub(crate) pages: Vec<PageRow>,
    pub(crate) moves: Vec<Move>,
    /// Every page's candidates, one page after another (see [`PageRow::candidates`]).
    pub(crate) candidates: Vec<Candidate<u32>>,
}

/// What an environment reports at a page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PageRow {
    /// Its fingerprint logged out, then logged in.
    pub(crate) fingerprints: [Fingerprint; 2],
    pub(crate) hint: f64,
    pub(crate) location: u64,
    /// [`forager_node::StateInfo::auth`] there.
    pub(crate) auth: f64,
    /// [`Page::slowness`].
    pub(crate) slowness: f64,
    /// Where its candidates are in [`SiteTables::candidates`].
    pub(crate) candidates: std::ops::Range<u32>,
    /// Whether it is the transient error page.
    pub(crate) transient: bool,
}

/// Where an action is offered and where it leads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Move {
    pub(crate) offered_on: OfferedOn,
    /// Where it leads logged out, then logged in.
    pub(crate) next: [SimState; 2],
    pub(crate) risk: RiskClass,
}

/// The pages that list an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OfferedOn {
    Nowhere,
    Page(u32),
    /// Never generated; a site built by hand may do it.
    Several,
}

impl SiteTables {
    /// Where `action` leads from `state`, as [`Site::transition`] says.
    pub(crate) fn transition(&self, site: &Site, state: SimState, action: u32) -> Option<SimState> {
        let step = self.moves.get(action as usize)?;
        match step.offered_on {
            OfferedOn::Page(page) if page == state.page => {
                Some(step.next[usize::from(state.logged_in)])
            }
            OfferedOn::Several => site.transition(state, action),
            OfferedOn::Page(_) | OfferedOn::Nowhere => None,
        }
    }
}

impl SiteTables {
    fn build(site: &Site) -> SiteTables {
        let fingerprints: Vec<[Fingerprint; 2]> = site
            .pages
            .iter()
            .enumerate()
            .map(|(page, info)| {
                [false, true].map(|logged_in| {
                    let identity = format!("{}|{}|{}|{logged_in}", site.seed, page, info.path);
                    Fingerprint::of_bytes("forager/sim", identity.as_bytes())
                })
            })
            .collect();
        // A page's text is its title and its links: a page linking to something like the goal
        // looks promising, as it does to a reader (decoys exploit exactly that).
        let goal = text_features(&site.goal);
        let hints: Vec<f64> = site
            .pages
            .iter()
            .map(|p| {
                let title = f64::from(goal.cosine(&text_features(&p.title)).max(0.0));
                let best_link = p
                    .actions
                    .iter()
                    .map(|&a| site.actions[a as usize].affinity)
                    .fold(0.0, f64::max);
                title.max(0.8 * best_link)
            })
            .collect();
        let locations: Vec<u64> = site.pages.iter().map(|p| location_of(&p.path)).collect();
        let per_page: Vec<Vec<Candidate<u32>>> = site
            .pages
            .iter()
            .map(|page| {
                let total: f64 = page
                    .actions
                    .iter()
                    .map(|&a| site.actions[a as usize].affinity + 0.05)
                    .sum();
                page.actions
                    .iter()
                    .map(|&a| {
                        let def = &site.actions[a as usize];
                        // A link's href is visible before clicking; forms and buttons are not.
                        let target = match def.effect {
                            Effect::Link(to) => Some(location_of(&site.pages[to as usize].path)),
                            _ => None,
                        };
                        Candidate {
                            action: a,
                            prior: (def.affinity + 0.05) / total.max(f64::MIN_POSITIVE),
                            risk: def.risk,
                            key: def.key,
                            target,
                            refused: None,
                            why: Default::default(),
                        }
                    })
                    .collect()
            })
            .collect();
        let mut candidates = Vec::new();
        let mut pages = Vec::with_capacity(site.pages.len());
        for (index, (page, listed)) in site.pages.iter().zip(per_page).enumerate() {
            let start = candidates.len() as u32;
            candidates.extend(listed);
            pages.push(PageRow {
                fingerprints: fingerprints[index],
                hint: hints[index],
                location: locations[index],
                auth: match page.kind {
                    PageKind::Login => 1.0,
                    _ if page.protected => 0.5,
                    _ => 0.0,
                },
                slowness: page.slowness,
                candidates: start..candidates.len() as u32,
                transient: page.kind == PageKind::Glitch,
            });
        }
        let mut offered_on = vec![OfferedOn::Nowhere; site.actions.len()];
        for (index, page) in site.pages.iter().enumerate() {
            for &action in &page.actions {
                let slot = &mut offered_on[action as usize];
                *slot = match *slot {
                    OfferedOn::Nowhere => OfferedOn::Page(index as u32),
                    _ => OfferedOn::Several,
                };
            }
        }
        let moves = site
            .actions
            .iter()
            .zip(offered_on)
            .map(|(def, offered_on)| Move {
                offered_on,
                next: [false, true].map(|logged_in| site.landing(def.effect, logged_in)),
                risk: def.risk,
            })
            .collect();
        SiteTables {
            pages,
            moves,
            candidates,
        }
    }
}

impl Site {
    /// The site's lookup tables, built on first use and shared by every environment after.
    pub fn tables(&self) -> std::sync::Arc<SiteTables> {
        self.tables
            .get_or_init(|| std::sync::Arc::new(SiteTables::build(self)))
            .clone()
    }
}
