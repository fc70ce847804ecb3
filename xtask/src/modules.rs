//! The check that no crate of the workspace has an import circle between its modules
//! (`cargo test -p xtask modules`).
//!
//! A crate's modules should form layers: a module may use the modules below it, never one
//! that (directly or through others) uses it back. A circle means no module of it can be read,
//! changed or tested alone. This check reads a crate's sources (no compiler involved) and
//! fails naming every circle as `a -> b -> c -> a`, with where each import is.
//!
//! What it reads, and what it leaves out:
//!
//! - The crate roots `src/lib.rs` and `src/main.rs` (each a crate of its own) and every
//!   module file they declare (`mod x;` → `x.rs` or `x/mod.rs`, recursively; `#[path]`
//!   attributes are not followed; `src/bin/` is another crate and is not read).
//! - A node of the graph is a top-level module of the crate: `x.rs` or `x/mod.rs` together
//!   with everything below it. Imports between the parts of one top-level module are not
//!   edges (a parent and its children are one unit here). The crate root is no node either:
//!   it declares the modules and re-exports their names.
//! - An edge `a -> b` is a path `crate::b::...` in `a` (a `use` or a path in code, grouped
//!   `use crate::{b::X, c::{Y, Z}}` included), or a bare `crate::Name` where the root
//!   re-exports `Name` from `b` (`pub use b::Name;`, `pub use b::{Name, ..}`, `as` renames;
//!   glob re-exports are not resolved). A name the root defines itself is no edge.
//!   `super::` paths are not followed: outside tests this workspace uses them only inside one
//!   top-level module.
//! - Comments (doc links included) and string literals are not read.
//! - Test code is left out: items under `#[cfg(test)]` (the `mod tests { .. }` blocks, and
//!   the files such a `mod x;` declares, e.g. `*_tests.rs`), and any file named
//!   `tests.rs` or `*_tests.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Where an import is: `file:line: path`.
type Site = String;

/// A crate's module graph: edges between top-level modules, each with the imports behind it.
#[derive(Debug, Default)]
pub struct Graph {
    /// The top-level modules.
    pub modules: BTreeSet<String>,
    /// `(from, to)` → where `from` imports `to`.
    pub edges: BTreeMap<(String, String), Vec<Site>>,
}

/// Source text with comments removed and string and char literals blanked (newlines kept,
/// so that line numbers stay right).
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    // Blank `c[from..to]`, keeping its newlines.
    let blank = |out: &mut String, from: usize, to: usize| {
        for ch in &c[from..to.min(c.len())] {
            out.push(if *ch == '\n' { '\n' } else { ' ' });
        }
    };
    while i < c.len() {
        let next = c.get(i + 1).copied();
        match c[i] {
            '/' if next == Some('/') => {
                let end = c[i..]
                    .iter()
                    .position(|ch| *ch == '\n')
                    .map_or(c.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            '/' if next == Some('*') => {
                let mut depth = 0;
                let mut j = i;
                while j < c.len() {
                    if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                        depth += 1;
                        j += 2;
                    } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            // Raw strings: r"..", r#".."#, br#".."#.
            'r' if (next == Some('"') || next == Some('#'))
                && (i == 0
                    || !is_ident(c[i - 1])
                    || (c[i - 1] == 'b' && (i < 2 || !is_ident(c[i - 2])))) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while c.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if c.get(j) != Some(&'"') {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push('r');
                blank(&mut out, i + 1, j);
                i = j;
            }
            '"' => {
                let mut j = i + 1;
                while j < c.len() && c[j] != '"' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            }
            // A char literal ('a', '\n', '\u{a7}'), not a lifetime ('a).
            '\'' => {
                let end = if next == Some('\\') {
                    // After the escaped character: `'\''`, `'\n'`, `'\u{a7}'`.
                    c.get(i + 3..).and_then(|rest| {
                        rest.iter()
                            .position(|ch| *ch == '\'')
                            .map(|p| i + 3 + p + 1)
                    })
                } else if c.get(i + 2) == Some(&'\'') {
                    Some(i + 3)
                } else {
                    None
                };
                match end {
                    Some(end) => {
                        blank(&mut out, i, end);
                        i = end;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `src` (stripped) with every item under `#[cfg(test)]` blanked (so a `mod x;` it declares
/// is not read either).
fn without_tests(src: &str) -> String {
    let mut c: Vec<char> = src.chars().collect();
    let pat: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + pat.len() <= c.len() {
        if c[i..i + pat.len()] != pat[..] {
            i += 1;
            continue;
        }
        // The item: up to the first `;` or balanced `{..}` at depth 0 (further attributes
        // are part of it).
        let mut j = i + pat.len();
        let mut depth = 0usize;
        let mut end = c.len();
        while j < c.len() {
            match c[j] {
                '[' | '(' => depth += 1,
                ']' | ')' => depth = depth.saturating_sub(1),
                ';' if depth == 0 => {
                    end = j + 1;
                    break;
                }
                '{' if depth == 0 => {
                    let mut braces = 0usize;
                    while j < c.len() {
                        match c[j] {
                            '{' => braces += 1,
                            '}' => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    end = (j + 1).min(c.len());
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        for ch in &mut c[i..end] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = end;
    }
    c.into_iter().collect()
}

/// The module files `src` declares (`mod x;`, not inline `mod x { .. }`).
fn declared_mods(src: &str) -> Vec<String> {
    let words = tokens(src);
    let mut out = Vec::new();
    for (k, w) in words.iter().enumerate() {
        if w == "mod"
            && let (Some(name), Some(semi)) = (words.get(k + 1), words.get(k + 2))
            && name.chars().all(is_ident)
            && semi == ";"
        {
            out.push(name.clone());
        }
    }
    out
}

/// Identifiers and single punctuation characters.
fn tokens(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in src.chars() {
        if is_ident(ch) {
            cur.push(ch);
            continue;
        }
        if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if !ch.is_whitespace() {
            out.push(ch.to_string());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A path of a use tree and its `as` name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UsePath {
    segments: Vec<String>,
    alias: Option<String>,
}

/// Parse the use tree at `c[*i..]` (after a `::`): `a::b::C`, `a::{b, c::{D, E}}`,
/// `a::B as C`, `a::*`, `a::{self, B}`. Appends to `out` with `prefix` before each path.
fn use_tree(c: &[char], i: &mut usize, prefix: &[String], out: &mut Vec<UsePath>) {
    let skip_ws = |i: &mut usize| {
        while *i < c.len() && c[*i].is_whitespace() {
            *i += 1;
        }
    };
    let mut segs = prefix.to_vec();
    loop {
        skip_ws(i);
        match c.get(*i) {
            Some('{') => {
                *i += 1;
                loop {
                    skip_ws(i);
                    match c.get(*i) {
                        Some('}') => {
                            *i += 1;
                            return;
                        }
                        Some(',') => *i += 1,
                        None => return,
                        _ => {
                            let before = *i;
                            use_tree(c, i, &segs, out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
            }
            Some('*') => {
                *i += 1;
                out.push(UsePath {
                    segments: segs,
                    alias: None,
                });
                return;
            }
            Some(ch) if is_ident(*ch) => {
                let start = *i;
                while *i < c.len() && is_ident(c[*i]) {
                    *i += 1;
                }
                let word: String = c[start..*i].iter().collect();
                if word != "self" {
                    segs.push(word);
                }
                skip_ws(i);
                if c.get(*i) == Some(&':') && c.get(*i + 1) == Some(&':') {
                    *i += 2;
                    continue;
                }
                let mut alias = None;
                if c.get(*i) == Some(&'a')
                    && c.get(*i + 1) == Some(&'s')
                    && c.get(*i + 2).is_some_and(|ch| ch.is_whitespace())
                {
                    *i += 2;
                    skip_ws(i);
                    let start = *i;
                    while *i < c.len() && is_ident(c[*i]) {
                        *i += 1;
                    }
                    alias = Some(c[start..*i].iter().collect());
                }
                out.push(UsePath {
                    segments: segs,
                    alias,
                });
                return;
            }
            _ => {
                if segs.len() > prefix.len() {
                    out.push(UsePath {
                        segments: segs,
                        alias: None,
                    });
                }
                return;
            }
        }
    }
}

/// Every `crate::...` path in `src` (stripped), with its line (1-based).
fn crate_paths(src: &str) -> Vec<(usize, UsePath)> {
    let c: Vec<char> = src.chars().collect();
    let pat: Vec<char> = "crate::".chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut counted = 0;
    let mut i = 0;
    while i + pat.len() <= c.len() {
        if c[i..i + pat.len()] != pat[..] || (i > 0 && is_ident(c[i - 1])) {
            i += 1;
            continue;
        }
        line += c[counted..i].iter().filter(|ch| **ch == '\n').count();
        counted = i;
        let mut j = i + pat.len();
        let mut paths = Vec::new();
        use_tree(&c, &mut j, &[], &mut paths);
        out.extend(paths.into_iter().map(|p| (line, p)));
        i = j.max(i + 1);
    }
    out
}

/// The names the root re-exports, by the top-level module they come from.
fn reexports(root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let c: Vec<char> = root.chars().collect();
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < c.len() {
        let at_word = i == 0 || !is_ident(c[i - 1]);
        if at_word && c[i..].starts_with(&['u', 's', 'e', ' ']) {
            let mut j = i + 4;
            let mut paths = Vec::new();
            use_tree(&c, &mut j, &[], &mut paths);
            for p in paths {
                let mut segs = p.segments.as_slice();
                if segs.first().is_some_and(|s| s == "crate") {
                    segs = &segs[1..];
                }
                if let (Some(first), Some(last)) = (segs.first(), segs.last())
                    && segs.len() >= 2
                    && modules.contains(first)
                {
                    out.insert(
                        p.alias.clone().unwrap_or_else(|| last.clone()),
                        first.clone(),
                    );
                }
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The module graph of the crate whose root file is `root` (`lib.rs`, `main.rs`) among
/// `files` (paths relative to `src`, `/`-separated, and their text).
pub fn graph(files: &BTreeMap<String, String>, root: &str) -> Graph {
    let mut g = Graph::default();
    let Some(root_src) = files.get(root) else {
        return g;
    };
    let root_code = without_tests(&strip(root_src));
    // Every module file: (top-level module, file).
    let mut owned: Vec<(String, String)> = Vec::new();
    // (directory of the declaring file's children, module name, top-level module)
    let mut todo: Vec<(String, String, Option<String>)> = declared_mods(&root_code)
        .into_iter()
        .map(|m| (String::new(), m, None))
        .collect();
    while let Some((dir, name, top)) = todo.pop() {
        let top = top.unwrap_or_else(|| name.clone());
        if top == name && dir.is_empty() {
            g.modules.insert(name.clone());
        }
        let flat = format!("{dir}{name}.rs");
        let nested = format!("{dir}{name}/mod.rs");
        let file = if files.contains_key(&flat) {
            flat
        } else if files.contains_key(&nested) {
            nested
        } else {
            continue;
        };
        let stem = name.as_str();
        if stem == "tests" || stem.ends_with("_tests") {
            continue;
        }
        let code = without_tests(&strip(&files[&file]));
        for m in declared_mods(&code) {
            todo.push((format!("{dir}{name}/"), m, Some(top.clone())));
        }
        owned.push((top, file));
    }
    let names = reexports(&root_code, &g.modules);
    owned.sort();
    for (top, file) in &owned {
        let code = without_tests(&strip(&files[file]));
        for (line, p) in crate_paths(&code) {
            let Some(first) = p.segments.first() else {
                continue;
            };
            let target = if g.modules.contains(first) {
                first.clone()
            } else if let Some(m) = names.get(first) {
                m.clone()
            } else {
                continue;
            };
            if &target == top {
                continue;
            }
            g.edges
                .entry((top.clone(), target))
                .or_default()
                .push(format!("{file}:{line}: crate::{}", p.segments.join("::")));
        }
    }
    g
}

/// Every elementary circle of `g`, each as its modules from the smallest name (the first is
/// not repeated at the end), at most `limit`.
pub fn cycles(g: &Graph, limit: usize) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = g.modules.iter().collect();
    let index: BTreeMap<&String, usize> = nodes.iter().enumerate().map(|(k, n)| (*n, k)).collect();
    let mut adj = vec![Vec::new(); nodes.len()];
    for (from, to) in g.edges.keys() {
        if let (Some(a), Some(b)) = (index.get(from), index.get(to)) {
            adj[*a].push(*b);
        }
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    let scc = tarjan(&adj);
    let mut out = Vec::new();
    // For each start s (in name order), the simple paths s -> .. -> s through nodes of s's
    // component after s: each circle once, from its smallest node.
    for s in 0..nodes.len() {
        let mut path = vec![s];
        let mut on = vec![false; nodes.len()];
        on[s] = true;
        circuits(&adj, &scc, s, s, &mut path, &mut on, &mut out, limit);
        if out.len() >= limit {
            break;
        }
    }
    out.into_iter()
        .map(|c| c.into_iter().map(|k| nodes[k].clone()).collect())
        .collect()
}

#[expect(
    clippy::too_many_arguments,
    reason = "a recursive helper's state, local to cycles()"
)]
fn circuits(
    adj: &[Vec<usize>],
    scc: &[usize],
    s: usize,
    v: usize,
    path: &mut Vec<usize>,
    on: &mut [bool],
    out: &mut Vec<Vec<usize>>,
    limit: usize,
) {
    for &w in &adj[v] {
        if out.len() >= limit {
            return;
        }
        if w == s {
            out.push(path.clone());
        } else if w > s && scc[w] == scc[s] && !on[w] {
            on[w] = true;
            path.push(w);
            circuits(adj, scc, s, w, path, on, out, limit);
            path.pop();
            on[w] = false;
        }
    }
}

/// Tarjan's strongly connected components: the component of each node.
fn tarjan(adj: &[Vec<usize>]) -> Vec<usize> {
    struct St<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        comp: Vec<usize>,
        next: usize,
        comps: usize,
    }
    fn visit(st: &mut St<'_>, v: usize) {
        st.index[v] = Some(st.next);
        st.low[v] = st.next;
        st.next += 1;
        st.stack.push(v);
        st.on[v] = true;
        for &w in &st.adj[v] {
            match st.index[w] {
                None => {
                    visit(st, w);
                    st.low[v] = st.low[v].min(st.low[w]);
                }
                Some(iw) if st.on[w] => st.low[v] = st.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(st.low[v]) == st.index[v] {
            while let Some(w) = st.stack.pop() {
                st.on[w] = false;
                st.comp[w] = st.comps;
                if w == v {
                    break;
                }
            }
            st.comps += 1;
        }
    }
    let n = adj.len();
    let mut st = St {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        comp: vec![0; n],
        next: 0,
        comps: 0,
    };
    for v in 0..n {
        if st.index[v].is_none() {
            visit(&mut st, v);
        }
    }
    st.comp
}

/// The most circles a report lists.
const LIMIT: usize = 500;

/// The circles of `g` as text (`a -> b -> a`, then where each edge of them is), or `None`
/// when there is none.
pub fn report(g: &Graph) -> Option<String> {
    let found = cycles(g, LIMIT);
    if found.is_empty() {
        return None;
    }
    let mut s = String::new();
    let mut used = BTreeSet::new();
    for c in &found {
        let mut names = c.clone();
        names.push(c[0].clone());
        s.push_str(&format!("  {}\n", names.join(" -> ")));
        for pair in names.windows(2) {
            used.insert((pair[0].clone(), pair[1].clone()));
        }
    }
    if found.len() >= LIMIT {
        s.push_str(&format!("  (the first {LIMIT} circles)\n"));
    }
    s.push_str("where (one path per line, at most 3 lines per import):\n");
    for e in &used {
        let mut lines = BTreeSet::new();
        let sites: Vec<&Site> = g
            .edges
            .get(e)
            .into_iter()
            .flatten()
            .filter(|site| lines.insert(site.split(": ").next().unwrap_or(site).to_string()))
            .collect();
        for site in sites.iter().take(3) {
            s.push_str(&format!("  {} -> {}: {site}\n", e.0, e.1));
        }
        if sites.len() > 3 {
            s.push_str(&format!(
                "  {} -> {}: and {} more lines\n",
                e.0,
                e.1,
                sites.len() - 3
            ));
        }
    }
    Some(s)
}

/// Every `.rs` file under `src` but `src/bin/`, by path relative to it.
pub fn read_src(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let p = e.path();
            if p.is_dir() {
                if !(rel.is_empty() && name == "bin") {
                    walk(&p, &format!("{rel}{name}/"), out);
                }
            } else if name.ends_with(".rs")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                out.insert(format!("{rel}{name}"), text);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, "", &mut out);
    out
}

/// The circles of the crate at `dir` (relative to the workspace root), for each of its roots
/// (`lib.rs`, `main.rs`), as text; `None` when it has none.
pub fn crate_report(root: &Path, dir: &str) -> Option<String> {
    let files = read_src(&root.join(dir).join("src"));
    let mut s = String::new();
    for r in ["lib.rs", "main.rs"] {
        if let Some(text) = report(&graph(&files, r)) {
            s.push_str(&format!(
                "{dir}/src/{r}: import circles between modules:\n{text}"
            ));
        }
    }
    (!s.is_empty()).then_some(s)
}

/// The workspace members (from the root `Cargo.toml`).
pub fn members(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let Some((_, rest)) = text.split_once("members = [") else {
        return Vec::new();
    };
    let list = rest.split(']').next().unwrap_or("");
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The workspace crates whose modules import each other in a circle today (the circles
/// when this list was written). Each is a known debt; the test fails once one of them has
/// none, so that it is taken off this list and kept acyclic from then on. Every other
/// member must stay free of circles.
const CYCLIC_TODAY: &[&str] = &[
    // client -> config -> client
    "jfrog-client",
    // managed -> providerconfig -> managed
    "providers/runtime",
    // cel -> node -> cel, crd -> validate -> crd and 7 more through them
    "sandbox/crd-schema",
    // admission -> store -> admission, http -> store -> http, rbac -> store -> rbac,
    // http -> rbac -> store -> http
    "sandbox/kube-testserver",
    // server -> services -> server, admin/auth/collections/oidc_exchange -> server -> ..,
    // descriptor -> services -> server -> descriptor (13 in all)
    "sandbox/jfrog-sim",
    // activate -> up -> activate
    "sandbox/cli",
    // cluster -> rbac -> cluster
    "sandbox/testkit",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn modules_of_the_family_crate_import_no_circle() {
        if let Some(r) = crate_report(&crate::root(), "providers/family") {
            panic!("{r}");
        }
    }

    #[test]
    fn modules_of_every_crate_import_no_circle() {
        let root = crate::root();
        let members = members(&root);
        assert!(
            members.iter().any(|m| m == "providers/family"),
            "members not found: {members:?}"
        );
        let mut problems = Vec::new();
        for m in &members {
            match (crate_report(&root, m), CYCLIC_TODAY.contains(&m.as_str())) {
                (Some(r), false) => problems.push(r),
                (None, true) => problems.push(format!(
                    "{m} has no import circle any more: take it off CYCLIC_TODAY in xtask/src/modules.rs\n"
                )),
                _ => {}
            }
        }
        assert!(problems.is_empty(), "{}", problems.concat());
    }

    #[test]
    fn strip_keeps_code_and_lines() {
        let src = "let a = \"crate::x\"; // crate::y\n/* crate::z\n */ let b = 'c'; fn f<'a>() {}\nlet r = r#\"crate::w\"#; crate::v::X";
        let s = strip(src);
        assert_eq!(s.lines().count(), src.lines().count());
        assert!(!s.contains("crate::x") && !s.contains("crate::y") && !s.contains("crate::z"));
        assert!(!s.contains("crate::w"), "{s}");
        assert!(s.contains("fn f<'a>()") && s.contains("crate::v::X"), "{s}");
    }

    #[test]
    fn use_trees_grouped_nested_and_renamed() {
        let src = "use crate::{a::X, b::{self, Y, c::Z as W}, d::*};\nfn f() { crate::e::g(); }";
        let got: Vec<(usize, Vec<String>, Option<String>)> = crate_paths(src)
            .into_iter()
            .map(|(l, p)| (l, p.segments, p.alias))
            .collect();
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                (1, v(&["a", "X"]), None),
                (1, v(&["b"]), None),
                (1, v(&["b", "Y"]), None),
                (1, v(&["b", "c", "Z"]), Some("W".into())),
                (1, v(&["d"]), None),
                (2, v(&["e", "g"]), None),
            ]
        );
    }

    #[test]
    fn an_acyclic_crate_has_no_circle() {
        let f = files(&[
            ("lib.rs", "pub mod a;\npub mod b;\nmod c;\npub use a::A;"),
            ("a.rs", "pub struct A;"),
            ("b.rs", "use crate::a::A;\npub struct B(A);"),
            ("c.rs", "use crate::{A, b::B};"),
        ]);
        let g = graph(&f, "lib.rs");
        assert_eq!(g.modules, ["a", "b", "c"].map(String::from).into());
        assert_eq!(
            g.edges.keys().cloned().collect::<Vec<_>>(),
            vec![
                ("b".to_string(), "a".to_string()),
                ("c".into(), "a".into()),
                ("c".into(), "b".into())
            ]
        );
        assert_eq!(report(&g), None);
    }

    #[test]
    fn a_circle_is_named_with_where_it_is() {
        let f = files(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;"),
            ("a.rs", "use crate::b::B;"),
            ("b.rs", "use crate::c::C;\n\nfn f() { crate::a::g() }"),
            ("c.rs", "pub use crate::a::A;"),
            ("d.rs", "use crate::a::A;"),
        ]);
        let g = graph(&f, "lib.rs");
        assert_eq!(
            cycles(&g, 10),
            vec![
                vec!["a".to_string(), "b".into()],
                vec!["a".into(), "b".into(), "c".into()]
            ]
        );
        let r = report(&g).expect("circles");
        assert!(
            r.contains("  a -> b -> a\n") && r.contains("  a -> b -> c -> a\n"),
            "{r}"
        );
        assert!(r.contains("b -> a: b.rs:3: crate::a::g"), "{r}");
        assert!(!r.contains("d ->"), "{r}");
    }

    #[test]
    fn grouped_uses_and_reexports_resolve_to_their_module() {
        // `a` uses `B` through the root's re-export (renamed), `b` uses `a` in a group.
        let f = files(&[
            (
                "lib.rs",
                "pub mod a;\npub mod b;\npub mod n;\npub use b::{Inner as B, other::Thing};\npub fn helper() {}",
            ),
            ("a.rs", "use crate::{B, helper};\n"),
            ("b/mod.rs", "pub mod other;\npub struct Inner;"),
            (
                "b/other.rs",
                "use crate::{n::N, a::{self, X}};\npub struct Thing;",
            ),
            ("n.rs", "use crate::Thing;"),
        ]);
        let g = graph(&f, "lib.rs");
        let edges: Vec<_> = g.edges.keys().cloned().collect();
        assert_eq!(
            edges,
            vec![
                ("a".to_string(), "b".to_string()),
                ("b".into(), "a".into()),
                ("b".into(), "n".into()),
                ("n".into(), "b".into())
            ]
        );
        let r = report(&g).expect("circles");
        assert!(
            r.contains("  a -> b -> a\n") && r.contains("  b -> n -> b\n"),
            "{r}"
        );
    }

    #[test]
    fn test_code_is_left_out() {
        let f = files(&[
            (
                "lib.rs",
                "mod a;\nmod b;\n#[cfg(test)]\nmod b_more;\n#[cfg(test)]\nmod a_tests;",
            ),
            ("a.rs", "use crate::b::B;"),
            (
                "b.rs",
                "pub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n    fn f() { let _ = '{'; }\n}\n#[cfg(test)]\nuse crate::a::Z;",
            ),
            ("b_more.rs", "use crate::a::A;"),
            ("a_tests.rs", "use crate::b::B;"),
        ]);
        let g = graph(&f, "lib.rs");
        assert_eq!(g.modules, ["a", "b"].map(String::from).into());
        assert_eq!(report(&g), None, "{:?}", g.edges);
    }
}
