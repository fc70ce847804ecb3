//! The simulator's OIDC token exchange from a test's side (`/__sim/oidc`: settings, counters,
//! the issued tokens) and the test server's issued service-account tokens.

use serde_json::Value;

use crate::{Sandbox, SimAdmin};

impl SimAdmin {
    /// `GET /__sim/oidc`: `issued`, `refused`, `issuedBySubject`, `maxTokenLifetimeSeconds`.
    pub async fn oidc(&self) -> Value {
        self.admin_get("/__sim/oidc").await
    }

    /// `PUT /__sim/oidc` (`caPem`, `maxTokenLifetimeSeconds`, `revokeIssued`).
    pub async fn put_oidc(&self, body: Value) {
        self.admin(reqwest::Method::PUT, "/__sim/oidc", Some(&body))
            .await;
    }

    /// The access tokens the exchange issued (the last 2,000).
    pub async fn oidc_tokens(&self) -> Vec<String> {
        let v: Value = self.admin_get("/__sim/oidc/tokens").await;
        v["tokens"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Sandbox {
    /// The service-account tokens the test server issued through TokenRequest.
    pub fn service_account_tokens(&self) -> Vec<String> {
        let text = self.kubectl_ok(&["get", "--raw", "/__testserver/service-account-tokens"]);
        let v: Value = serde_json::from_str(&text).expect("JSON");
        v["tokens"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}
