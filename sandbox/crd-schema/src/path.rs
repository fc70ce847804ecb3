//! Field-path helpers: kube-apiserver's `field.Path` rendering (`a.b[0].c`, `a[key]`).

/// `path.Child(name)`.
pub(crate) fn child(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}.{name}")
    }
}

/// `path.Index(i)`.
pub(crate) fn index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// `path.Key(k)`.
pub(crate) fn key(base: &str, k: &str) -> String {
    format!("{base}[{k}]")
}
