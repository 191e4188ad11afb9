//! No file of the oracle, the conformance runner or the reference controller imports a file
//! that imports it back, directly or around a longer circle (issue 70).
//!
//! A circle of imports is where a reader cannot start: to understand either file one must
//! first understand the other. The oracle was laid out so that each subsystem depends one way
//! (the book's contributing/architecture.md draws its layers); this keeps it so.
//!
//! A file *imports* another when it names an item the other defines: a `use`, or a path in
//! code (`crate::judge::verdict::Level`, `super::step::REFUSED`, `verdict::Level` after `use
//! super::verdict`, inside macros too). A path through a module that only re-exports the item
//! (`pub use`) counts for both the re-exporting file and the defining one. A parent's `pub
//! use child::Item` that the parent does not use itself is the module tree's front door, not
//! a dependency, and does not count. Methods called on a value whose type the file never names
//! are not seen: the check reads names, as a reader does.
//!
//! `spec/src` (the model, whose state, actions and properties form one circle of 20 files)
//! and the command-line crate in `src/` are not laid out so yet and are not checked.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The source folders checked, relative to the workspace root.
const CHECKED: [&str; 3] = ["oracle/src", "conformance/src", "controller/src"];

/// A module's path from its crate's root (`["judge", "search"]`).
type ModPath = Vec<String>;

/// One source folder: its files by module, the inline modules, and what each file re-exports.
struct Crate {
    root: PathBuf,
    files: BTreeMap<ModPath, PathBuf>,
    /// Every module, the files' and the inline ones (`mod tests { … }`).
    modules: BTreeSet<ModPath>,
    /// Per file: the names its `pub use` items give, and the path each stands for.
    reexports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
    parsed: BTreeMap<ModPath, syn::File>,
}

/// Where one file names another: `(line, the path as written)`.
type Edges = BTreeMap<(PathBuf, PathBuf), Vec<(usize, String)>>;

impl Crate {
    fn read(root: &Path) -> Crate {
        let mut files = BTreeMap::new();
        collect_files(root, root, &mut files);
        let mut parsed = BTreeMap::new();
        for (module, file) in &files {
            let text =
                std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let ast = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: not Rust syn reads: {e}", file.display()));
            parsed.insert(module.clone(), ast);
        }
        let mut modules: BTreeSet<ModPath> = files.keys().cloned().collect();
        for (module, ast) in &parsed {
            inline_modules(module, &ast.items, &mut modules);
        }
        let mut krate = Crate {
            root: root.to_path_buf(),
            files,
            modules,
            reexports: BTreeMap::new(),
            parsed,
        };
        let mut reexports = BTreeMap::new();
        for (module, ast) in &krate.parsed {
            let mut names = BTreeMap::new();
            for item in &ast.items {
                if let syn::Item::Use(u) = item {
                    if matches!(u.vis, syn::Visibility::Inherited) {
                        continue;
                    }
                    for (name, path, _) in use_paths(&u.tree) {
                        if let (Some(name), Some(target)) = (name, krate.absolute(module, &path)) {
                            names.insert(name, target);
                        }
                    }
                }
            }
            reexports.insert(module.clone(), names);
        }
        krate.reexports = reexports;
        krate
    }

    /// The module path `path` (as written in module `scope`) stands for, if it is this
    /// crate's: `crate::…`, `self::…`, `super::…`, or a module of `scope` by its name.
    fn absolute(&self, scope: &[String], path: &[String]) -> Option<ModPath> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" => Some([scope, &path[1..]].concat()),
            "super" => {
                let mut base = scope.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                Some([&base, rest].concat())
            }
            _ => {
                let child = [scope, &path[..1]].concat();
                self.modules
                    .contains(&child)
                    .then(|| [scope, path].concat())
            }
        }
    }

    /// The file a crate path names, and the files of the items it re-exports on the way:
    /// `crate::scenario::Scenario` names scenario/mod.rs and, through its `pub use`,
    /// scenario/definition.rs.
    fn files_named(&self, path: &[String]) -> Vec<PathBuf> {
        let mut named = Vec::new();
        let mut path = path.to_vec();
        // A re-export of a re-export, at most a few deep; a loop would be a compile error.
        for _ in 0..8 {
            let Some(k) = (0..=path.len())
                .rev()
                .find(|&k| self.files.contains_key(&path[..k]))
            else {
                break;
            };
            let module = path[..k].to_vec();
            named.push(self.files[&module].clone());
            let Some(next) = path
                .get(k)
                .and_then(|item| self.reexports.get(&module)?.get(item))
            else {
                break;
            };
            path = [next.as_slice(), &path[k + 1..]].concat();
        }
        named
    }

    fn edges(&self) -> Edges {
        let mut edges = Edges::new();
        for (module, ast) in &self.parsed {
            let mut walk = Walk {
                krate: self,
                file_module: module.clone(),
                scopes: Vec::new(),
                names_in_code: BTreeSet::new(),
                named: Vec::new(),
                front_doors: Vec::new(),
            };
            walk.scope(module.clone(), &ast.items);
            let Walk {
                mut named,
                front_doors,
                names_in_code,
                ..
            } = walk;
            // A parent's re-export of its child's item counts only if the parent uses it.
            named.extend(
                front_doors
                    .into_iter()
                    .filter(|(name, ..)| names_in_code.contains(name))
                    .map(|(_, line, path, written)| (line, path, written)),
            );
            let from = &self.files[module];
            for (line, path, written) in named {
                for to in self.files_named(&path) {
                    if &to != from {
                        edges
                            .entry((from.clone(), to))
                            .or_default()
                            .push((line, written.clone()));
                    }
                }
            }
        }
        edges
    }

    fn show(&self, file: &Path) -> String {
        file.strip_prefix(self.root.parent().unwrap_or(&self.root))
            .unwrap_or(file)
            .display()
            .to_string()
    }
}

/// The `.rs` files under `dir`, by module path (`lib.rs`: the root; `x/mod.rs` and `x.rs`: x).
fn collect_files(root: &Path, dir: &Path, files: &mut BTreeMap<ModPath, PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap().with_extension("");
            let mut module: ModPath = relative
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if module == ["lib"] || module == ["main"] || module.last().unwrap() == "mod" {
                module.pop();
            }
            files.insert(module, path);
        }
    }
}

fn inline_modules(scope: &[String], items: &[syn::Item], modules: &mut BTreeSet<ModPath>) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            if let Some((_, inner)) = &m.content {
                let path = [scope, &[m.ident.to_string()]].concat();
                inline_modules(&path, inner, modules);
                modules.insert(path);
            }
        }
    }
}

/// The paths a `use` tree brings in: `(the name it gives, the path, line)`; a glob gives no
/// name.
fn use_paths(tree: &syn::UseTree) -> Vec<(Option<String>, ModPath, usize)> {
    fn walk(
        tree: &syn::UseTree,
        prefix: &mut ModPath,
        out: &mut Vec<(Option<String>, ModPath, usize)>,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let line = n.ident.span().start().line;
                if n.ident == "self" {
                    let name = prefix.last().cloned();
                    out.push((name, prefix.clone(), line));
                } else {
                    let path = [prefix.as_slice(), &[n.ident.to_string()]].concat();
                    out.push((Some(n.ident.to_string()), path, line));
                }
            }
            syn::UseTree::Rename(r) => {
                let path = [prefix.as_slice(), &[r.ident.to_string()]].concat();
                let line = r.ident.span().start().line;
                out.push((Some(r.rename.to_string()), path, line));
            }
            syn::UseTree::Glob(g) => {
                out.push((None, prefix.clone(), g.star_token.span.start().line));
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    walk(tree, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// What one file names, scope by scope (the file's module, then each inline module in it).
struct Walk<'a> {
    krate: &'a Crate,
    file_module: ModPath,
    /// The module being read, and the names its `use` items give.
    scopes: Vec<(ModPath, BTreeMap<String, ModPath>)>,
    /// The first segment of every path in the file's code.
    names_in_code: BTreeSet<String>,
    /// `(line, crate path, as written)` of each thing the file names.
    named: Vec<(usize, ModPath, String)>,
    /// A parent's `pub use` of its descendant's item: `(name, line, crate path, as written)`.
    front_doors: Vec<(String, usize, ModPath, String)>,
}

impl Walk<'_> {
    fn scope(&mut self, module: ModPath, items: &[syn::Item]) {
        // A module's `use` items name things for all of it, before and after them.
        self.scopes.push((module, BTreeMap::new()));
        for item in items {
            if let syn::Item::Use(u) = item {
                self.take_use(u, true);
            }
        }
        for item in items {
            if !matches!(item, syn::Item::Use(_)) {
                self.visit_item(item);
            }
        }
        self.scopes.pop();
    }

    /// What a `use` item names, and the names it gives the scope it is in. At a module's
    /// level (`in_module`), a `pub use` of the file's descendant is a front door, which counts
    /// only if the file uses the name.
    fn take_use(&mut self, u: &syn::ItemUse, in_module: bool) {
        let (module, _) = self.scopes.last().expect("inside a scope");
        let module = module.clone();
        let public = !matches!(u.vis, syn::Visibility::Inherited);
        for (name, path, line) in use_paths(&u.tree) {
            let Some(target) = self.krate.absolute(&module, &path) else {
                continue;
            };
            let written = format!("use {}", path.join("::"));
            let below = target.len() > self.file_module.len()
                && target.starts_with(&self.file_module)
                && module == self.file_module;
            match (&name, in_module && public && below) {
                (Some(name), true) => {
                    self.front_doors
                        .push((name.clone(), line, target.clone(), written))
                }
                _ => self.named.push((line, target.clone(), written)),
            }
            if let Some(name) = name {
                let names = &mut self.scopes.last_mut().expect("inside a scope").1;
                names.insert(name, target);
            }
        }
    }

    /// A path in code, `segments` as written.
    fn path(&mut self, segments: Vec<String>, line: usize) {
        let Some(first) = segments.first() else {
            return;
        };
        self.names_in_code.insert(first.clone());
        let (module, names) = self.scopes.last().expect("inside a scope");
        let target = match names.get(first) {
            Some(target) => Some([target.as_slice(), &segments[1..]].concat()),
            None => self.krate.absolute(module, &segments),
        };
        if let Some(target) = target {
            self.named.push((line, target, segments.join("::")));
        }
    }

    /// Paths in a macro's tokens (`format!("{}", crate::x::y())`), which syn leaves unparsed.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(first) => {
                    let line = first.span().start().line;
                    let mut segments = vec![first.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.path(segments, line);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for Walk<'_> {
    /// A `use` inside a function body (those of a module are read by [`Walk::scope`]).
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.take_use(u, false);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if let Some((_, items)) = &m.content {
            let scope = self.scopes.last().expect("inside a scope").0.clone();
            self.scope([scope, vec![m.ident.to_string()]].concat(), items);
        }
    }

    /// `pub(super)`, `pub(in crate::x)`: who may see an item, not what it names.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segments = p.segments.iter().map(|s| s.ident.to_string()).collect();
            let line = p
                .segments
                .first()
                .map_or(0, |s| s.ident.span().start().line);
            self.path(segments, line);
        }
        syn::visit::visit_path(self, p);
    }

    /// An attribute's arguments (`#[error("{}", crate::api_error::describe(.0))]`).
    fn visit_meta_list(&mut self, m: &'ast syn::MetaList) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }
}

/// The circles of files: Tarjan's strongly connected components of more than one file.
fn circles(edges: &Edges) -> Vec<Vec<PathBuf>> {
    let mut next: BTreeMap<&PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
        next.entry(to).or_default();
    }
    struct Tarjan<'a> {
        next: &'a BTreeMap<&'a PathBuf, Vec<&'a PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for &w in &self.next[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().expect("v is on the stack");
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in next.keys() {
        if !tarjan.index.contains_key(v) {
            tarjan.visit(v);
        }
    }
    tarjan.found
}

/// Each circle with the imports that close it, for the failure message.
fn describe(krate: &Crate, edges: &Edges) -> Vec<String> {
    circles(edges)
        .iter()
        .map(|files| {
            let mut text = format!(
                "a circle of {} files: {}",
                files.len(),
                files
                    .iter()
                    .map(|f| krate.show(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for ((from, to), at) in edges {
                if files.contains(from) && files.contains(to) {
                    let (line, written) = &at[0];
                    text += &format!(
                        "\n  {}:{line} names {written} ({})",
                        krate.show(from),
                        krate.show(to)
                    );
                }
            }
            text
        })
        .collect()
}

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in CHECKED {
        let krate = Crate::read(&workspace.join(dir));
        let edges = krate.edges();
        // A reading that sees nothing would pass: each crate's files do import each other.
        assert!(
            edges.len() >= krate.files.len() / 2,
            "{dir}: {} imports between {} files",
            edges.len(),
            krate.files.len()
        );
        found.extend(describe(&krate, &edges));
    }
    assert!(found.is_empty(), "{}", found.join("\n\n"));
}

/// A crate of `files` (path, text) in a temporary folder, read.
fn crate_of(files: &[(&str, &str)]) -> (tempfile::TempDir, Crate) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    for (path, text) in files {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let krate = Crate::read(&src);
    (dir, krate)
}

#[test]
fn the_circles_the_check_finds_and_the_ones_it_does_not() {
    // Two files naming each other's items, one by a `use`, one by a path in a macro.
    let (_dir, krate) = crate_of(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\nfn f() { println!(\"{:?}\", crate::a::A::new()); }\n",
        ),
    ]);
    let found = describe(&krate, &krate.edges());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("src/a.rs:1 names use crate::b::B"),
        "{found:?}"
    );
    assert!(
        found[0].contains("src/b.rs:2 names crate::a::A::new"),
        "{found:?}"
    );

    // A parent re-exporting its child's item is the module tree, not a circle; the child
    // naming its sibling through the parent's re-export is a dependency on both.
    let (_dir, krate) = crate_of(&[
        ("lib.rs", "mod s;\n"),
        (
            "s/mod.rs",
            "mod def;\nmod parse;\npub use def::Scenario;\npub use parse::parse;\n",
        ),
        ("s/def.rs", "pub struct Scenario;\n"),
        (
            "s/parse.rs",
            "use super::Scenario;\npub fn parse() -> Scenario { Scenario }\n",
        ),
    ]);
    let edges = krate.edges();
    assert!(describe(&krate, &edges).is_empty());
    let named: Vec<String> = edges
        .keys()
        .map(|(from, to)| format!("{} -> {}", krate.show(from), krate.show(to)))
        .collect();
    assert_eq!(
        named,
        [
            "src/s/parse.rs -> src/s/def.rs",
            "src/s/parse.rs -> src/s/mod.rs"
        ]
    );

    // The parent that calls its child, whose child uses the parent's own item: a circle,
    // also when the name comes from a `use super::module` and is used in code.
    let (_dir, krate) = crate_of(&[
        ("lib.rs", "mod s;\n"),
        (
            "s/mod.rs",
            "mod parse;\npub use parse::parse;\npub struct Scenario;\nfn load() { parse(); }\n",
        ),
        (
            "s/parse.rs",
            "pub fn parse() {\n    use crate::s::Scenario;\n    Scenario;\n}\n",
        ),
    ]);
    let found = describe(&krate, &krate.edges());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("src/s/mod.rs:4 names parse (src/s/parse.rs)"),
        "{found:?}"
    );
    assert!(
        found[0].contains("src/s/parse.rs:2 names use crate::s::Scenario"),
        "{found:?}"
    );
}
