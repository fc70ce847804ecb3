//! The repository store and its indexes: by exact key (sorted), by lower-case key (JFrog's
//! keys are unique case-insensitively) and the reverse index of virtual-repository members,
//! so that no single-repository request costs O(number of repositories).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::spec::{DEFAULT_LAYOUTS, RClass};

/// A stored repository: its full configuration, defaults filled in, secrets in clear.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    pub rclass: RClass,
    pub package_type: String,
    pub config: Map<String, Value>,
}

impl Repo {
    /// The members of a virtual repository.
    pub fn members(&self) -> Vec<String> {
        match self.config.get("repositories") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }

    pub fn project_key(&self) -> Option<&str> {
        self.config
            .get("projectKey")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
}

/// `repo` as an admin reads it, serialised.
pub(crate) fn render(repo: &Repo) -> Arc<str> {
    serde_json::to_string(&super::admin_view(repo)).map_or_else(|_| Arc::from("{}"), Arc::from)
}

#[derive(Debug, Clone)]
pub(crate) struct Store {
    repos: BTreeMap<String, Repo>,
    lower: HashMap<String, String>,
    /// member key -> virtual repositories that list it.
    member_of: HashMap<String, BTreeSet<String>>,
    /// Repository layouts that exist.
    pub layouts: BTreeSet<String>,
    /// Each repository's configuration as an admin reads it, serialised once per change:
    /// the list of all configurations joins these instead of building and serialising every
    /// repository again at each request (100,000 of them at the scale bench's size).
    admin_json: HashMap<String, Arc<str>>,
}

impl Default for Store {
    fn default() -> Store {
        Store {
            repos: BTreeMap::new(),
            lower: HashMap::new(),
            member_of: HashMap::new(),
            admin_json: HashMap::new(),
            layouts: DEFAULT_LAYOUTS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

impl Store {
    pub fn get(&self, key: &str) -> Option<&Repo> {
        self.repos.get(key)
    }

    /// The existing key that equals `key` ignoring case.
    pub fn existing_ci(&self, key: &str) -> Option<&str> {
        self.lower.get(&key.to_lowercase()).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.repos.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Repo)> {
        self.repos.iter()
    }

    /// The configuration of `key` as an admin reads it (secrets encrypted), serialised.
    pub fn admin_json(&self, key: &str) -> Option<&Arc<str>> {
        self.admin_json.get(key)
    }

    /// Inserts or replaces a repository, keeping the indexes.
    pub fn insert(&mut self, key: &str, repo: Repo) {
        self.unlink_members(key);
        if repo.rclass == RClass::Virtual {
            for m in repo.members() {
                self.member_of.entry(m).or_default().insert(key.to_owned());
            }
        }
        self.lower.insert(key.to_lowercase(), key.to_owned());
        self.admin_json.insert(key.to_owned(), render(&repo));
        self.repos.insert(key.to_owned(), repo);
    }

    /// The virtual repositories whose members include `key`, sorted.
    pub fn aggregated_by(&self, key: &str) -> Vec<String> {
        self.member_of
            .get(key)
            .map(|v| v.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Removes a repository and its mentions in virtual repositories (Artifactory drops a
    /// deleted repository from every virtual repository that aggregates it).
    pub fn remove(&mut self, key: &str) -> Option<Repo> {
        let repo = self.repos.remove(key)?;
        self.lower.remove(&key.to_lowercase());
        self.admin_json.remove(key);
        self.unlink_members(key);
        if let Some(virtuals) = self.member_of.remove(key) {
            for v in virtuals {
                if let Some(vr) = self.repos.get_mut(&v) {
                    if let Some(Value::Array(a)) = vr.config.get_mut("repositories") {
                        a.retain(|m| m.as_str() != Some(key));
                    }
                    if vr
                        .config
                        .get("defaultDeploymentRepo")
                        .and_then(Value::as_str)
                        == Some(key)
                    {
                        vr.config.remove("defaultDeploymentRepo");
                    }
                    self.admin_json.insert(v.clone(), render(vr));
                }
            }
        }
        Some(repo)
    }

    fn unlink_members(&mut self, key: &str) {
        let Some(old) = self.repos.get(key) else {
            return;
        };
        if old.rclass != RClass::Virtual {
            return;
        }
        for m in old.members() {
            if let Some(set) = self.member_of.get_mut(&m) {
                set.remove(key);
                if set.is_empty() {
                    self.member_of.remove(&m);
                }
            }
        }
    }

    /// Whether `from` (a virtual repository) reaches `target` through virtual members.
    pub fn reaches(&self, from: &str, target: &str) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(k) = stack.pop() {
            if k == target {
                return true;
            }
            if !seen.insert(k.clone()) {
                continue;
            }
            if let Some(r) = self.repos.get(&k)
                && r.rclass == RClass::Virtual
            {
                stack.extend(r.members());
            }
        }
        false
    }
}
