//! What the fault suite searches for secret values and drives faults with: every output a
//! user or an operator sees (the sandbox's and providers' logs, core and events.k8s.io Events,
//! the managed resources with their conditions), and the simulator's fault, token and
//! collection admin routes.

use serde_json::{Value, json};

use crate::{Mr, Sandbox, SimAdmin};

impl Sandbox {
    /// Every output of the sandbox as (place, text): every log under its state directory
    /// (its own stdout/stderr, each provider's and replica's log), the Events of both APIs, and each of `mrs` as JSON (spec, status,
    /// conditions). The state directory's credentials (kubeconfig, jfrog.env) are not outputs.
    pub async fn outputs(&self, mrs: &[Mr]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut files = Vec::new();
        collect_files(&self.dir, &mut files);
        files.retain(|p| {
            p.extension()
                .is_some_and(|x| x == "log" || x == "err" || x == "out")
        });
        files.sort();
        for f in files {
            if let Ok(bytes) = std::fs::read(&f) {
                out.push((
                    f.display().to_string(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
        for what in ["events", "events.events.k8s.io"] {
            let o = self.kubectl(&["get", what, "-A", "-o", "json"]);
            out.push((
                what.to_string(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
            ));
        }
        for mr in mrs {
            if let Some(o) = mr.try_get().await {
                out.push((mr.display(), serde_json::to_string(&o).unwrap_or_default()));
            }
        }
        out
    }

    /// How many times any of `secrets` occurs in [`Sandbox::outputs`] (empty values ignored);
    /// the places are printed on stderr, never the values.
    pub async fn secrets_in_outputs(&self, mrs: &[Mr], secrets: &[&str]) -> u64 {
        let mut found = 0;
        for (place, text) in self.outputs(mrs).await {
            for s in secrets.iter().filter(|s| !s.is_empty()) {
                let n = u64::try_from(text.matches(s).count()).unwrap_or(u64::MAX);
                if n > 0 {
                    eprintln!(
                        "[{}] a secret value occurs {n} time(s) in {place}",
                        self.tag
                    );
                    found += n;
                }
            }
        }
        found
    }
}

impl SimAdmin {
    /// `POST /__sim/faults` with a FaultSpec (`{"method":"PUT","pathPrefix":"/","errorRate":
    /// 0.2,"status":503,...}`); returns the fault's id.
    pub async fn add_fault(&self, spec: &Value) -> u64 {
        let v: Value = self
            .admin(reqwest::Method::POST, "/__sim/faults", Some(spec))
            .await
            .json()
            .await
            .expect("fault id JSON");
        v["id"].as_u64().expect("fault id")
    }

    /// `DELETE /__sim/faults`: every fault removed.
    pub async fn clear_faults(&self) {
        self.admin(reqwest::Method::DELETE, "/__sim/faults", None)
            .await;
    }

    /// The active faults (`[{"id":1,"fault":{...}}]`).
    pub async fn faults(&self) -> Vec<Value> {
        self.admin_get("/__sim/faults").await
    }

    /// `POST /__sim/tokens`: a new access token (admin or not).
    pub async fn mint_token(&self, admin: bool) -> String {
        let body = json!({"admin": admin});
        let v: Value = self
            .admin(reqwest::Method::POST, "/__sim/tokens", Some(&body))
            .await
            .json()
            .await
            .expect("token JSON");
        v["token"].as_str().expect("token").to_string()
    }

    /// `POST /__sim/tokens/revoke`: the token is refused from now on.
    pub async fn revoke_token(&self, token: &str) {
        let body = json!({"token": token});
        self.admin(reqwest::Method::POST, "/__sim/tokens/revoke", Some(&body))
            .await;
    }

    /// Object count per simulator collection (`GET /__sim/collections`).
    pub async fn collection_counts(&self) -> std::collections::BTreeMap<String, u64> {
        self.admin_get("/__sim/collections").await
    }

    /// Every stored object of a collection (`GET /__sim/collections/{name}`).
    pub async fn collection(&self, name: &str) -> Vec<Value> {
        self.admin_get(&format!("/__sim/collections/{name}")).await
    }
}

fn collect_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_files(&p, out);
        } else {
            out.push(p);
        }
    }
}
