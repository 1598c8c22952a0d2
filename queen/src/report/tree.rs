//! The search tree's picture: lays the view model's vertices out (leaves left to right, parents
//! centred over their children, one row per depth) and draws them as an inline SVG through
//! maud, so every label and tooltip a page or a peer wrote is escaped like the rest of the
//! report. Edges first and the winning path's on top; a node's fill is its mean value, its
//! outline the peer that searched it, a pruned node grey with a cross.

use super::view::{NodeState, RunView, clip, short_peer};
use maud::{Markup, html};
use std::fmt::Write as _;

/// The peers' outline colours, by index (repeating).
const PEER_COLOURS: &[&str] = &[
    "#1f77b4", "#9467bd", "#e377c2", "#17becf", "#8c564b", "#bcbd22", "#ff7f0e", "#7f7f7f",
];

/// The colour of the `index`th peer of a run.
pub(super) fn peer_colour(index: usize) -> &'static str {
    PEER_COLOURS[index % PEER_COLOURS.len()]
}

/// A colour for a value in [0, 1]: red (0) through amber to green (1).
fn value_colour(value: f64) -> String {
    let v = if value.is_finite() {
        value.clamp(0.0, 1.0)
    } else {
        0.0
    };
    format!("hsl({:.0},70%,42%)", v * 120.0)
}

/// Horizontal distance between two leaves.
const DX: f64 = 14.0;
/// Vertical distance between two depths.
const DY: f64 = 64.0;
/// Space around the tree.
const MARGIN: f64 = 30.0;

/// Where each vertex goes, and the picture's size.
struct Layout {
    /// Per vertex, its column (in leaves, fractional for parents).
    column: Vec<f64>,
    width: f64,
    height: f64,
}

impl Layout {
    fn of(view: &RunView) -> Layout {
        let count = view.vertices.len();
        let mut column = vec![0.0f64; count];
        let mut next_leaf = 0.0f64;
        // Iterative post-order, so that a deep tree cannot overflow the stack.
        let mut stack: Vec<(usize, bool)> = vec![(0, false)];
        let mut max_depth = 0;
        while let Some((v, expanded)) = stack.pop() {
            let Some(vertex) = view.vertices.get(v) else {
                continue;
            };
            max_depth = max_depth.max(vertex.depth);
            match (vertex.children.first(), vertex.children.last()) {
                (Some(&first), Some(&last)) if expanded => {
                    column[v] = (column[first] + column[last]) / 2.0;
                }
                (Some(_), Some(_)) => {
                    stack.push((v, true));
                    for &c in vertex.children.iter().rev() {
                        stack.push((c, false));
                    }
                }
                _ => {
                    column[v] = next_leaf;
                    next_leaf += 1.0;
                }
            }
        }
        Layout {
            column,
            width: (next_leaf * DX + 2.0 * MARGIN).max(600.0),
            height: f64::from(max_depth) * DY + 2.0 * MARGIN + 90.0,
        }
    }

    /// A vertex's centre.
    fn position(&self, view: &RunView, v: usize) -> (f64, f64) {
        (
            MARGIN + self.column[v] * DX,
            MARGIN + f64::from(view.vertices[v].depth) * DY,
        )
    }
}

/// What hovering over a vertex says: its label, state, numbers, detail and peer.
fn tooltip(view: &RunView, v: usize) -> String {
    let vertex = &view.vertices[v];
    let mut tip = format!(
        "{} — {}",
        clip(&vertex.label, 160),
        vertex.state.name().replace('_', " ")
    );
    if vertex.visits > 0 {
        let _ = write!(tip, ", {} visits, value {:.2}", vertex.visits, vertex.value);
    }
    if vertex.replay > 0.0 {
        let _ = write!(tip, ", memory vote R {:.2}", vertex.replay);
    }
    if let Some(detail) = &vertex.detail {
        let _ = write!(tip, " ({})", clip(detail, 200));
    }
    if let Some(peer) = vertex.peer.and_then(|p| view.peers.get(p)) {
        let _ = write!(tip, ", searched by …{}", short_peer(peer));
    }
    tip
}

/// The tree as an `<svg id=search-tree>`.
pub(super) fn tree_svg(view: &RunView) -> Markup {
    let layout = Layout::of(view);
    let (width, height) = (layout.width, layout.height);
    // Edges first, winners last (on top).
    let mut edges: Vec<(usize, usize, bool)> = Vec::new();
    for pass in [false, true] {
        for (v, vertex) in view.vertices.iter().enumerate() {
            for &c in &vertex.children {
                let winner = vertex.winner && view.vertices[c].winner;
                if winner == pass {
                    edges.push((v, c, winner));
                }
            }
        }
    }
    html! {
        svg id="search-tree" xmlns="http://www.w3.org/2000/svg"
            width=(format_args!("{width:.0}")) height=(format_args!("{height:.0}"))
            viewBox=(format_args!("0 0 {width:.0} {height:.0}")) role="img" aria-label="search tree" {
            @for &(v, c, winner) in &edges {
                @let (x1, y1) = layout.position(view, v);
                @let (x2, y2) = layout.position(view, c);
                line.tree-edge x1=(format_args!("{x1:.1}")) y1=(format_args!("{y1:.1}"))
                    x2=(format_args!("{x2:.1}")) y2=(format_args!("{y2:.1}"))
                    stroke=(if winner { "#f5a623" } else { "#c5cad3" })
                    stroke-width=(if winner { "3.5" } else { "1" }) {}
            }
            @for (v, vertex) in view.vertices.iter().enumerate() {
                (node(view, &layout, v, vertex))
            }
        }
    }
}

/// One vertex: a `g.tree-node` with its state, tooltip, circle and label.
fn node(view: &RunView, layout: &Layout, v: usize, vertex: &super::view::Vertex) -> Markup {
    let (cx, cy) = layout.position(view, v);
    let pruned = vertex.state.is_pruned();
    let radius = 4.0 + (f64::from(vertex.visits) + 1.0).log2().min(5.0);
    let fill = match vertex.state {
        NodeState::Pruned(_) => "#b9bec8".to_owned(),
        NodeState::Unexplored => "#ffffff".to_owned(),
        NodeState::Root => "#1d2330".to_owned(),
        NodeState::Success => value_colour(1.0),
        NodeState::Open | NodeState::Exhausted => value_colour(vertex.value),
    };
    let outline = vertex.peer.map_or("#5b6475", peer_colour);
    let d = radius * 0.6;
    html! {
        g.tree-node.winner[vertex.winner] data-status=(vertex.state.name()) {
            title { (tooltip(view, v)) }
            @if vertex.winner {
                circle cx=(format_args!("{cx:.1}")) cy=(format_args!("{cy:.1}"))
                    r=(format_args!("{:.1}", radius + 4.0)) fill="none" stroke="#f5a623"
                    stroke-width="3" {}
            }
            circle cx=(format_args!("{cx:.1}")) cy=(format_args!("{cy:.1}"))
                r=(format_args!("{radius:.1}")) fill=(fill) stroke=(outline) stroke-width="2"
                stroke-dasharray=[pruned.then_some("2 2")] {}
            @if pruned {
                path d=(format_args!(
                    "M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}",
                    cx - d, cy - d, cx + d, cy + d, cx - d, cy + d, cx + d, cy - d
                )) stroke="#5b6475" stroke-width="1.5" {}
            }
            // The start page and the branches are labelled; deeper nodes say it on hover.
            @if vertex.depth == 1 {
                @let (x, y) = (cx + 8.0, cy + 4.0);
                text x=(format_args!("{x:.1}")) y=(format_args!("{y:.1}")) font-size="10"
                    fill="#1d2330" transform=(format_args!("rotate(35 {x:.1} {y:.1})")) {
                    (clip(&vertex.label, 28))
                }
            } @else if vertex.depth == 0 {
                text x=(format_args!("{:.1}", cx + 10.0)) y=(format_args!("{:.1}", cy + 4.0))
                    font-size="11" fill="#1d2330" { "start page" }
            }
        }
    }
}
