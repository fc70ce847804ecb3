//! CRD descriptions for the people who read them with `kubectl explain`: the declarations'
//! documentation carries notes for whoever maintains the Kind (what Terraform does, how a
//! field travels on the wire, where a catalog text was wrong). [`for_users`] keeps what a user
//! needs and leaves those notes out, clause by clause.

/// Whether a piece of text is a maintainer's note rather than user documentation.
fn is_note(s: &str) -> bool {
    const MARKERS: &[&str] = &[
        "Terraform schema",
        "Terraform code",
        "Terraform resource",
        "Terraform provider",
        "Upjet",
        "Wire:",
        "wire:",
        " stale",
        "ForceNew",
        "IsRequired",
        "SDKv2",
        "ignore_changes",
        "import id",
        "import ID",
    ];
    MARKERS.iter().any(|m| s.contains(m))
        || has_word(s, "TF")
        || is_resource_name(s)
        || (s.trim_start().starts_with("Terraform ") && s.split_whitespace().any(is_resource_name))
}

/// `word` as a whole word of `s` (not inside a longer word).
fn has_word(s: &str, word: &str) -> bool {
    s.match_indices(word).any(|(i, _)| {
        let before = s[..i].chars().next_back();
        let after = s[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// A Terraform resource type name such as `artifactory_proxy`.
fn is_resource_name(s: &str) -> bool {
    let s = s.trim().trim_matches('`');
    ["artifactory_", "xray_", "project_", "platform_"]
        .iter()
        .any(|p| s.starts_with(p))
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `doc` without its maintainer's notes: parenthesised notes go, then `;`-separated clauses
/// and whole sentences that are notes.
pub fn for_users(doc: &str) -> String {
    // Parenthesised groups (not nested) that are notes, with the space before them.
    let mut text = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')').map(|c| open + c) else {
            break;
        };
        let inner = &rest[open + 1..close];
        if inner.contains('(') || !is_note(inner) {
            text.push_str(&rest[..=close]);
        } else {
            text.push_str(rest[..open].trim_end());
        }
        rest = &rest[close + 1..];
    }
    text.push_str(rest);
    // Sentences (". " boundaries), each of `; ` clauses.
    let mut sentences = Vec::new();
    for sentence in split_keep(&text, ". ") {
        let body = sentence.trim_end_matches('.');
        let clauses: Vec<&str> = body
            .split("; ")
            .filter(|c| !is_note(c) && !c.trim().is_empty())
            .collect();
        if clauses.is_empty() {
            continue;
        }
        let mut s = clauses.join("; ");
        if let Some(first) = s.chars().next()
            && first.is_lowercase()
            && !body.starts_with(&s)
        {
            s = first.to_uppercase().chain(s.chars().skip(1)).collect();
        }
        sentences.push(format!("{}.", s.trim_end_matches('.')));
    }
    let out = sentences.join(" ");
    if doc.trim_end().ends_with('.') || out.is_empty() {
        out
    } else {
        out.trim_end_matches('.').to_string()
    }
}

/// `s` split after each `sep` (the separator's first character stays with its part).
fn split_keep<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, _) in s.match_indices(sep) {
        parts.push(&s[start..=i]);
        start = i + sep.len();
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::for_users;

    #[test]
    fn maintainers_notes_are_left_out() {
        assert_eq!(
            for_users("Artifactory proxy (artifactory_proxy)."),
            "Artifactory proxy."
        );
        assert_eq!(
            for_users(
                "Project scope; sent as query parameter projectKey on every call (2-32 chars, ^[a-z][a-z0-9-]{1,31}$; the TF description's '2 - 10' is stale)."
            ),
            "Project scope; sent as query parameter projectKey on every call."
        );
        assert_eq!(
            for_users("A JFrog OIDC Identity Mapping (Terraform platform_oidc_identity_mapping)."),
            "A JFrog OIDC Identity Mapping."
        );
        assert_eq!(
            for_users("A JFrog Xray watch (Terraform `xray_watch`)."),
            "A JFrog Xray watch."
        );
        assert_eq!(
            for_users("Rule priority, >= 1; TF sorts rules read back by priority."),
            "Rule priority, >= 1."
        );
        assert_eq!(
            for_users(
                "Repositories covered by the permission. Wire: resources.artifact = {actions:{users:{name:[perms]}}}."
            ),
            "Repositories covered by the permission."
        );
        assert_eq!(
            for_users(
                "Password for SMTP authentication; never read back. Not marked Sensitive in the TF schema (so Upjet keeps it a plain string field); treat as secret."
            ),
            "Password for SMTP authentication; never read back. Treat as secret."
        );
        // User documentation stays as it is, Terraform registries included.
        for keep in [
            "Base URL of the upstream Terraform registry API.".to_string(),
            "Key of the repository (2-64 characters).".to_string(),
            "IaC scan (terraformbackend).".to_string(),
        ] {
            assert_eq!(for_users(&keep), keep);
        }
    }
}
