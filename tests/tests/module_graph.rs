//! The shape of the source, checked: no modules of a crate import each other (two directly,
//! or more round a circle), and every crate's `# Layout` (in the `//!` of its `lib.rs` or
//! `main.rs`) lists every module it declares. Both rules are in ARCHITECTURE.md; these tests
//! keep them true.
//!
//! The source is read as text, not compiled: comments, strings and character literals are
//! removed, the rest is cut into words and punctuation, and every path that starts with
//! `crate::` or `super::` is resolved to the module it names. An import counts between
//! *siblings*, the two modules just below the deepest module both paths share:
//! `node/src/browser/env.rs` naming `crate::search::Search` is `browser` → `search`, naming
//! `super::tab::Tab` is `env` → `tab` inside `browser`. A child naming its parent (or the
//! reverse) is how Rust modules are built and does not count. A `mod tests { … }` inside a
//! file belongs to that file's module, so a test's imports count as its module's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path inside its crate: `[]` is the crate root, `["browser", "env"]` is
/// `crate::browser::env`.
type ModulePath = Vec<String>;

/// The workspace's root, one folder above this package.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package sits inside the workspace")
        .to_path_buf()
}

/// The `src` folder of every member of the workspace, read from `members = [...]` in the root
/// `Cargo.toml`, so that a new crate is checked without anyone remembering to add it here.
fn crate_sources() -> Vec<PathBuf> {
    let root = workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("root Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("members"))
        .and_then(|rest| {
            rest.split_once('[')
                .and_then(|(_, list)| list.split_once(']'))
        })
        .map(|(list, _)| list)
        .expect("the root Cargo.toml lists its members on one line");
    let sources: Vec<PathBuf> = members
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .filter(|member| !member.is_empty())
        .map(|member| root.join(member).join("src"))
        .collect();
    assert!(sources.len() >= 2, "no members found in {members:?}");
    sources
}

/// Every `.rs` file under `dir`, with the module path its place in the tree gives it
/// (`lib.rs`/`main.rs` → root, `a/mod.rs` → `a`, `a/b.rs` → `a::b`).
fn module_files(src: &Path) -> Vec<(ModulePath, PathBuf)> {
    let mut files = Vec::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("source folder readable") {
            let path = entry.expect("folder entry").path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let inside_src = path.strip_prefix(src).expect("under src");
            let mut module: ModulePath = inside_src
                .with_extension("")
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("lib" | "main" | "mod")
            ) {
                module.pop();
            }
            files.push((module, path));
        }
    }
    files.sort();
    files
}

/// One piece of code: a word (identifier or keyword, `$crate` included) or one punctuation
/// character, with `::` kept as one piece.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    PathSeparator,
    Punct(char),
}

/// Cuts Rust source into tokens, leaving out comments, string literals and character literals
/// (a `"{"` or a `// crate::x` must not count as code).
fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && starts_raw_string(&chars, i + 1) {
            i = skip_raw_string(&chars, i + 1);
        } else if c == 'b' && next == Some('r') && starts_raw_string(&chars, i + 2) {
            i = skip_raw_string(&chars, i + 2);
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                // An escape hides the character after it (`\"`).
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' {
            // `'x'` and `'\n'` are characters; `'a` is a lifetime or a label.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Word(chars[start..i].iter().collect()));
        } else if c == ':' && next == Some(':') {
            tokens.push(Token::PathSeparator);
            i += 2;
        } else {
            if !c.is_whitespace() {
                tokens.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    tokens
}

/// Whether `r` at `chars[at - 1]` opens a raw string: `r"` or `r#…#"`.
fn starts_raw_string(chars: &[char], at: usize) -> bool {
    let hashes = chars[at..].iter().take_while(|&&c| c == '#').count();
    chars.get(at + hashes) == Some(&'"')
}

/// The index just past the raw string whose hashes start at `chars[at]`.
fn skip_raw_string(chars: &[char], at: usize) -> usize {
    let hashes = chars[at..].iter().take_while(|&&c| c == '#').count();
    let mut i = at + hashes + 1;
    while i < chars.len() {
        if chars[i] == '"' && chars[i + 1..].iter().take_while(|&&c| c == '#').count() >= hashes {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

/// The paths a token stream names after `position` (which is just past a `::`): one for
/// `a::b::C`, several for `{a::B, c::{D, E}}`. Returns them and the index after the last.
fn paths_after(tokens: &[Token], mut position: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        match tokens.get(position) {
            Some(Token::Word(word)) => {
                prefix.push(word.clone());
                position += 1;
                if tokens.get(position) == Some(&Token::PathSeparator) {
                    position += 1;
                } else {
                    return (vec![prefix], position);
                }
            }
            Some(Token::Punct('{')) => {
                position += 1;
                let mut paths = Vec::new();
                while let Some(token) = tokens.get(position) {
                    match token {
                        Token::Punct('}') => {
                            position += 1;
                            break;
                        }
                        Token::Punct(',') => position += 1,
                        Token::Word(_) | Token::Punct('{') => {
                            let (inner, after) = paths_after(tokens, position);
                            paths.extend(inner.into_iter().map(|tail| {
                                let mut path = prefix.clone();
                                path.extend(tail);
                                path
                            }));
                            // `as Name` and the like: skip to the item's end.
                            position = after;
                            while let Some(Token::Word(_)) = tokens.get(position) {
                                position += 1;
                            }
                        }
                        _ => position += 1,
                    }
                }
                return (paths, position);
            }
            // `crate::*`, or the end of the source.
            _ => return (vec![prefix], position),
        }
    }
}

/// The modules one file's code names, as (the module naming, the absolute path it names).
/// `mod name { … }` inside the file is followed, so that `super::` inside it resolves right.
fn named_paths(file_module: &ModulePath, source: &str) -> Vec<(ModulePath, Vec<String>)> {
    let tokens = tokenize(source);
    let mut found = Vec::new();
    // Inline modules open at this file's position: (name, brace depth outside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth: usize = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                // Saturating: a brace the reader misjudged must not stop the check.
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|&(_, outside)| outside == depth) {
                    inline.pop();
                }
            }
            Token::Word(word) if word == "mod" => {
                if let (Some(Token::Word(name)), Some(Token::Punct('{'))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    inline.push((name.clone(), depth));
                }
            }
            Token::Word(word)
                if (word == "crate" || word == "$crate" || word == "super")
                    && tokens.get(i + 1) == Some(&Token::PathSeparator)
                    // `a::super` is not a start: only a path's first word is.
                    && (i == 0 || tokens[i - 1] != Token::PathSeparator) =>
            {
                let mut module = file_module.clone();
                module.extend(inline.iter().map(|(name, _)| name.clone()));
                let base: ModulePath = if word == "super" {
                    let mut parent = module.clone();
                    parent.pop();
                    parent
                } else {
                    Vec::new()
                };
                let (paths, after) = paths_after(&tokens, i + 2);
                for path in paths {
                    let mut absolute = base.clone();
                    let mut segments = path.into_iter().peekable();
                    // `super::super::x`: each further `super` climbs one more.
                    while segments.peek().is_some_and(|s| s == "super") {
                        segments.next();
                        absolute.pop();
                    }
                    absolute.extend(segments);
                    found.push((module.clone(), absolute));
                }
                i = after;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The longest prefix of `path` that is a module of the crate (`crate::a::b::Item` → `a::b`).
fn module_of(path: &[String], modules: &BTreeSet<ModulePath>) -> ModulePath {
    (0..=path.len())
        .rev()
        .map(|len| path[..len].to_vec())
        .find(|prefix| modules.contains(prefix))
        .unwrap_or_default()
}

/// The items the crate root re-exports (`pub use environment::{Candidate, …}`), each with the
/// module it comes from.
fn root_reexports(
    root_source: &str,
    modules: &BTreeSet<ModulePath>,
) -> BTreeMap<String, ModulePath> {
    let tokens = tokenize(root_source);
    let mut reexports = BTreeMap::new();
    for (i, token) in tokens.iter().enumerate() {
        let is_pub_use = *token == Token::Word(String::from("use"))
            && i > 0
            && matches!(&tokens[i - 1], Token::Word(word) if word == "pub");
        if !is_pub_use {
            continue;
        }
        for mut path in paths_after(&tokens, i + 1).0 {
            if path.first().is_some_and(|first| first == "crate") {
                path.remove(0);
            }
            let home = module_of(&path, modules);
            if let (Some(item), false) = (path.last(), home.is_empty()) {
                reexports.insert(item.clone(), home);
            }
        }
    }
    reexports
}

/// Which sibling imports which, per crate: (parent module, importer, imported) → one line
/// where it happens, to name in a failure.
type SiblingImports = BTreeMap<(ModulePath, String, String), String>;

/// The imports between sibling modules of the crate whose source is `src`.
fn sibling_imports(src: &Path) -> SiblingImports {
    let files = module_files(src);
    let mut modules: BTreeSet<ModulePath> = files.iter().map(|(m, _)| m.clone()).collect();
    let sources: Vec<(ModulePath, PathBuf, String)> = files
        .into_iter()
        .map(|(module, path)| {
            let text = std::fs::read_to_string(&path).expect("source readable");
            (module, path, text)
        })
        .collect();
    // Inline modules that name a path (`mod tests { use super::*; }`) are modules too.
    for (module, _, text) in &sources {
        for (inner, _) in named_paths(module, text) {
            modules.insert(inner);
        }
    }
    let reexports = sources
        .iter()
        .find(|(module, _, _)| module.is_empty())
        .map(|(_, _, root)| root_reexports(root, &modules))
        .unwrap_or_default();
    let mut imports = SiblingImports::new();
    for (module, path, text) in &sources {
        for (importer, named) in named_paths(module, text) {
            let mut imported = module_of(&named, &modules);
            // `crate::Candidate` is `crate::environment::Candidate` when the root re-exports it:
            // a shortcut through the root still imports the module.
            if imported.is_empty()
                && let Some(home) = named.first().and_then(|item| reexports.get(item))
            {
                imported = home.clone();
            }
            let shared = importer
                .iter()
                .zip(&imported)
                .take_while(|(a, b)| a == b)
                .count();
            // One is the other's ancestor: a parent and its child, not siblings.
            let (Some(from), Some(to)) = (importer.get(shared), imported.get(shared)) else {
                continue;
            };
            imports
                .entry((importer[..shared].to_vec(), from.clone(), to.clone()))
                .or_insert_with(|| format!("{} names {}", relative(path), named.join("::")));
        }
    }
    imports
}

/// The circles of imports among sibling modules, one line each: two modules importing each
/// other (`a → b → a`), or a longer ring (`a → b → c → a`), each with where every step is.
fn import_cycles(src: &Path) -> Vec<String> {
    let imports = sibling_imports(src);
    let mut cycles = Vec::new();
    let mut reported: BTreeSet<(ModulePath, BTreeSet<String>)> = BTreeSet::new();
    for (parent, from, to) in imports.keys() {
        // An import from→to closes a circle when `from` can be reached again from `to`.
        let Some(ring) = shortest_path(&imports, parent, to, from) else {
            continue;
        };
        let members: BTreeSet<String> = ring.iter().cloned().collect();
        if !reported.insert((parent.clone(), members)) {
            continue; // the same circle, found from another of its imports
        }
        let mut steps = vec![from.clone()];
        steps.extend(ring);
        let places: Vec<&str> = steps
            .windows(2)
            .map(|step| imports[&(parent.clone(), step[0].clone(), step[1].clone())].as_str())
            .collect();
        let place = if parent.is_empty() {
            String::from("crate")
        } else {
            format!("crate::{}", parent.join("::"))
        };
        cycles.push(format!(
            "{}: {place}: {} ({})",
            relative(src),
            steps.join(" → "),
            places.join("; ")
        ));
    }
    cycles
}

/// The modules on the shortest chain of imports from `start` to `goal` among the children of
/// `parent` (both ends included), if there is one.
fn shortest_path(
    imports: &SiblingImports,
    parent: &ModulePath,
    start: &str,
    goal: &str,
) -> Option<Vec<String>> {
    // Breadth first, remembering where each module was first reached from.
    let mut reached_from: BTreeMap<String, String> = BTreeMap::new();
    let mut frontier = vec![start.to_owned()];
    let mut seen = BTreeSet::from([start.to_owned()]);
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for module in frontier {
            if module == goal {
                let mut path = vec![module];
                while let Some(previous) = reached_from.get(&path[path.len() - 1]) {
                    path.push(previous.clone());
                }
                path.reverse();
                return Some(path);
            }
            let imported = imports
                .keys()
                .filter(|(p, from, _)| p == parent && *from == module)
                .map(|(_, _, to)| to);
            for to in imported {
                if seen.insert(to.clone()) {
                    reached_from.insert(to.clone(), module.clone());
                    next.push(to.clone());
                }
            }
        }
        frontier = next;
    }
    None
}

#[test]
fn no_two_modules_import_each_other() {
    let cycles: Vec<String> = crate_sources()
        .iter()
        .flat_map(|src| import_cycles(src))
        .collect();
    assert!(
        cycles.is_empty(),
        "modules that import each other, directly or round a circle (move what they share \
         to a module below them):\n{}",
        cycles.join("\n")
    );
}

/// `path` from the workspace's root, for messages.
fn relative(path: &Path) -> String {
    path.strip_prefix(workspace_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The `//!` text of a crate root's `# Layout` section, up to the next heading.
fn layout_section(root_source: &str) -> Option<String> {
    let docs: Vec<&str> = root_source
        .lines()
        .map_while(|line| line.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = docs.iter().position(|line| *line == "# Layout")?;
    let section = docs[start + 1..]
        .iter()
        .take_while(|line| !line.starts_with('#'))
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    Some(section)
}

/// The modules a crate root declares from files (`mod name;`, `pub mod name;`), not the
/// inline ones (`mod tests { … }`).
fn declared_modules(root_source: &str) -> Vec<String> {
    let tokens = tokenize(root_source);
    tokens
        .windows(3)
        .filter_map(|window| match window {
            [Token::Word(keyword), Token::Word(name), Token::Punct(';')] if keyword == "mod" => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn every_crate_layout_lists_its_modules() {
    let mut missing = Vec::new();
    for src in crate_sources() {
        let root = ["lib.rs", "main.rs"]
            .iter()
            .map(|name| src.join(name))
            .find(|path| path.exists())
            .expect("a crate has a lib.rs or a main.rs");
        let text = std::fs::read_to_string(&root).expect("crate root readable");
        let Some(layout) = layout_section(&text) else {
            missing.push(format!("{}: no `# Layout` section", relative(&root)));
            continue;
        };
        for module in declared_modules(&text) {
            if !layout.contains(&format!("`{module}`")) {
                missing.push(format!("{}: `# Layout` misses `{module}`", relative(&root)));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "crate docs whose `# Layout` does not list every module (one line each: what it is \
         for):\n{}",
        missing.join("\n")
    );
}

/// No product crate starts a task and drops its handle: a task nobody awaits is started by
/// `forager_node::actor::spawn_detached`, which logs its panic (a `tokio::spawn` statement
/// whose handle is thrown away would end unseen). The `tests` package's own doubles (a fake
/// node, an echo server, pipes drained) are test code and not held to it.
#[test]
fn no_task_is_spawned_and_forgotten() {
    let mut forgotten = Vec::new();
    for src in crate_sources() {
        if src.parent().is_some_and(|member| member.ends_with("tests")) {
            continue;
        }
        for (_, file) in module_files(&src) {
            if file.ends_with("node/src/actor.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("source readable");
            for (number, line) in text.lines().enumerate() {
                let statement = line.trim_start();
                if ["tokio::spawn(", "tokio::task::spawn(", "spawn("]
                    .iter()
                    .any(|start| statement.starts_with(start))
                {
                    forgotten.push(format!("{}:{}: {}", relative(&file), number + 1, statement));
                }
            }
        }
    }
    assert!(
        forgotten.is_empty(),
        "tasks spawned with their handle dropped (keep the handle, or use \
         forager_node::actor::spawn_detached so that a panic is logged):\n{}",
        forgotten.join("\n")
    );
}

#[test]
fn the_reader_finds_imports_in_groups_and_ignores_comments_and_strings() {
    let source = r#"
        use crate::{action::Action, risk::{self, RiskClass}};
        // use crate::commented::Out;
        const TEXT: &str = "crate::quoted::Out";
        const BRACE: char = '{';
        fn f<'a>(x: &'a str) { super::sibling::call(x); }
        mod tests {
            use super::*;
            use super::super::up::Thing;
        }
    "#;
    let module = vec![String::from("parent"), String::from("here")];
    let named: Vec<(String, String)> = named_paths(&module, source)
        .into_iter()
        .map(|(from, to)| (from.join("::"), to.join("::")))
        .collect();
    let expect = |from: &str, to: &str| (from.to_owned(), to.to_owned());
    assert_eq!(
        named,
        vec![
            expect("parent::here", "action::Action"),
            expect("parent::here", "risk::self"),
            expect("parent::here", "risk::RiskClass"),
            expect("parent::here", "parent::sibling::call"),
            expect("parent::here::tests", "parent::here"),
            expect("parent::here::tests", "parent::up::Thing"),
        ]
    );
}

#[test]
fn a_circle_of_three_is_found_and_a_dead_end_is_not() {
    let mut imports = SiblingImports::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        imports.insert((Vec::new(), from.into(), to.into()), String::new());
    }
    let names = |list: &[&str]| list.iter().map(|name| name.to_string()).collect::<Vec<_>>();
    assert_eq!(
        shortest_path(&imports, &Vec::new(), "b", "a"),
        Some(names(&["b", "c", "a"]))
    );
    assert_eq!(shortest_path(&imports, &Vec::new(), "d", "a"), None);
}
