//! Where an object is, for its REST binding: an [`Address`] holds the object's key, the keys
//! of the objects it lives in, what else its binding's calls need (a [`Detail`] of the
//! binding's own type) and the query parameters that scope it.
//!
//! An address has one canonical string form (its [`fmt::Display`]):
//! `<parent>/.../<key><detail>?<name>=<value>&...`, e.g. `team/dev` (a project's role),
//! `github/ci/team` (an identity mapping of provider `github` in project `team`),
//! `policy?projectKey=team` (a scoped object). That string keys the snapshots' write marks,
//! the singleton claims and the lists a binding maps an address to, and names the object
//! in events and logs; the empty string is an address not known yet (a parent key unset).
//!
//! This module uses nothing else of the crate.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// What a binding's calls need beyond an object's key, its parents and its query (the
/// members a group's member list declares, the project and switch of a lifecycle stage):
/// a value of the binding's own type, set by the family's `address` hook
/// ([`Address::with_detail`]) and read back by the binding ([`Address::detail`]).
///
/// Its [`fmt::Display`] writes its part of the address's canonical form, which follows the
/// key (e.g. `/team/false`; nothing for a detail that adds nothing to it).
pub trait Detail: Any + fmt::Debug + fmt::Display + Send + Sync {}

/// Where an object is, for its REST binding (see the [module](self) documentation).
#[derive(Debug, Clone, Default)]
pub struct Address {
    parents: Vec<String>,
    key: String,
    detail: Option<Arc<dyn Detail>>,
    query: Vec<(String, String)>,
}

impl Address {
    /// The address of the object `key`, with no parent, detail or query.
    pub fn new(key: impl Into<String>) -> Self {
        Address {
            key: key.into(),
            ..Address::default()
        }
    }

    /// The address not known yet (a parent key unset): the empty string.
    pub fn unknown() -> Self {
        Address::default()
    }

    /// This address inside `parent` (an object that holds it: a project, an OIDC
    /// configuration), after the parents already given: the outermost comes first.
    #[must_use]
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parents.push(parent.into());
        self
    }

    /// This address with `detail`, which the binding reads back with [`Address::detail`].
    #[must_use]
    pub fn with_detail(mut self, detail: impl Detail) -> Self {
        self.detail = Some(Arc::new(detail));
        self
    }

    /// This address with the query parameter `name=value` after those already given.
    #[must_use]
    pub fn with_query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// The object's key (its identifier within its parents; empty for a server-assigned
    /// object before its create).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The keys of the objects this one lives in, the outermost first.
    pub fn parents(&self) -> &[String] {
        &self.parents
    }

    /// The key of the object this one lives in (the first of [`Address::parents`]); empty
    /// when it has none.
    pub fn parent(&self) -> &str {
        self.parents.first().map_or("", String::as_str)
    }

    /// The detail of type `T` the address carries, if any.
    pub fn detail<T: Detail>(&self) -> Option<&T> {
        let detail: &dyn Any = self.detail.as_deref()?;
        detail.downcast_ref()
    }

    /// The query parameters, in order.
    pub fn query(&self) -> &[(String, String)] {
        &self.query
    }

    /// Whether the canonical form is empty: an address not known yet.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
            && self.key.is_empty()
            && self.query.is_empty()
            && self
                .detail
                .as_ref()
                .is_none_or(|d| d.to_string().is_empty())
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.parents {
            write!(f, "{p}/")?;
        }
        f.write_str(&self.key)?;
        if let Some(d) = &self.detail {
            write!(f, "{d}")?;
        }
        for (i, (n, v)) in self.query.iter().enumerate() {
            let sep = if i == 0 { '?' } else { '&' };
            write!(f, "{sep}{n}={v}")?;
        }
        Ok(())
    }
}

/// Two addresses are equal when their parents, keys and queries are and their details
/// write the same part of the canonical form.
impl PartialEq for Address {
    fn eq(&self, other: &Self) -> bool {
        let detail = |a: &Address| a.detail.as_ref().map(|d| d.to_string());
        self.parents == other.parents
            && self.key == other.key
            && self.query == other.query
            && detail(self) == detail(other)
    }
}

impl Eq for Address {}

impl From<&str> for Address {
    fn from(key: &str) -> Self {
        Address::new(key)
    }
}

impl From<String> for Address {
    fn from(key: String) -> Self {
        Address::new(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group's declared members, written `/<member>\n<member>...` after the key.
    #[derive(Debug, PartialEq)]
    struct Members(Vec<String>);

    impl fmt::Display for Members {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "/{}", self.0.join("\n"))
        }
    }

    impl Detail for Members {}

    /// A project and a switch, written `/<project>/<switch>` after the key.
    #[derive(Debug, PartialEq)]
    struct Scope {
        project: String,
        switch: bool,
    }

    impl fmt::Display for Scope {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "/{}/{}", self.project, self.switch)
        }
    }

    impl Detail for Scope {}

    #[test]
    fn a_plain_address_is_its_key() {
        let a = Address::new("libs");
        assert_eq!(a.to_string(), "libs");
        assert_eq!((a.key(), a.parent()), ("libs", ""));
        assert!(a.parents().is_empty() && a.query().is_empty());
        assert_eq!(Address::from("libs"), a);
        assert!(!a.is_empty());
        assert!(Address::unknown().is_empty());
        assert_eq!(Address::unknown().to_string(), "");
    }

    #[test]
    fn parents_come_before_the_key() {
        let a = Address::new("dev").with_parent("team");
        assert_eq!(a.to_string(), "team/dev");
        assert_eq!((a.parent(), a.key()), ("team", "dev"));
        let two = Address::new("c").with_parent("a").with_parent("b");
        assert_eq!(two.to_string(), "a/b/c");
        assert_eq!(two.parents(), ["a", "b"]);
    }

    #[test]
    fn a_detail_follows_the_key_and_is_read_back_typed() {
        let members = Members(vec!["alice".into(), "bob".into()]);
        let a = Address::new("devs").with_detail(Members(members.0.clone()));
        assert_eq!(a.to_string(), "devs/alice\nbob");
        assert_eq!(a.detail::<Members>(), Some(&members));
        assert_eq!(a.detail::<Scope>(), None);
        assert_eq!(
            Address::new("devs")
                .with_detail(Members(Vec::new()))
                .to_string(),
            "devs/"
        );
        let stage = Address::new("qa").with_detail(Scope {
            project: String::new(),
            switch: false,
        });
        assert_eq!(stage.to_string(), "qa//false");
        let mapping = Address::new("ci").with_parent("github").with_detail(Scope {
            project: "team".into(),
            switch: true,
        });
        assert_eq!(mapping.to_string(), "github/ci/team/true");
        assert_ne!(mapping, Address::new("ci").with_parent("github"));
    }

    #[test]
    fn a_query_ends_the_address() {
        let a = Address::new("p").with_query("projectKey", "team");
        assert_eq!(a.to_string(), "p?projectKey=team");
        let two = a.clone().with_query("x", "1");
        assert_eq!(two.to_string(), "p?projectKey=team&x=1");
        assert_eq!(
            two.query(),
            [
                ("projectKey".to_string(), "team".to_string()),
                ("x".to_string(), "1".to_string())
            ]
        );
        // A server-assigned object before its create: its scope alone.
        let scoped = Address::unknown().with_query("projectKey", "team");
        assert_eq!(scoped.to_string(), "?projectKey=team");
        assert!(!scoped.is_empty());
    }
}
