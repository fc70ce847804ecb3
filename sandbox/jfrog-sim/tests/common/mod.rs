//! Shared helpers of the simulator's HTTP tests (`sim/main.rs` and `logs.rs`).

use std::time::Duration;

use jfrog_sim::{SimConfig, Simulator};
use reqwest::{Method, StatusCode};
use serde_json::Value;

pub async fn start() -> Simulator {
    start_with(SimConfig::default()).await
}

pub async fn start_with(cfg: SimConfig) -> Simulator {
    Simulator::start(cfg).await.expect("simulator starts")
}

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client builds")
}

/// A client bound to one simulator and token.
pub struct Api {
    pub base: String,
    pub token: Option<String>,
    pub http: reqwest::Client,
}

pub struct Resp {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// The message of an Artifactory error body, checking its shape.
    pub fn art_error(&self) -> String {
        let v = self.json();
        let e = &v["errors"][0];
        assert_eq!(
            e["status"].as_u64(),
            Some(u64::from(self.status.as_u16())),
            "{}",
            self.text
        );
        e["message"].as_str().unwrap_or_default().to_owned()
    }
}

impl Api {
    pub fn admin(sim: &Simulator) -> Api {
        Api {
            base: sim.url(),
            token: Some(sim.admin_token()),
            http: client(),
        }
    }

    pub fn with_token(sim: &Simulator, token: Option<String>) -> Api {
        Api {
            base: sim.url(),
            token,
            http: client(),
        }
    }

    /// A request to `path` with this client's token, for what [`Api::call`] does not send
    /// (another content type, extra headers); send it with [`Api::send`].
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let req = self.http.request(method, format!("{}{}", self.base, path));
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// `Content-Type: <content_type>` and `body` to `path`.
    pub async fn text(&self, method: Method, path: &str, content_type: &str, body: &str) -> Resp {
        self.send(
            self.request(method, path)
                .header("Content-Type", content_type)
                .body(body.to_owned()),
        )
        .await
    }

    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Resp {
        let mut req = self.request(method, path);
        if let Some(b) = body {
            req = req.json(&b);
        }
        self.send(req).await
    }

    pub async fn send(&self, req: reqwest::RequestBuilder) -> Resp {
        let r = req.send().await.expect("request sent");
        let status = r.status();
        let headers = r.headers().clone();
        let text = r.text().await.expect("body read");
        Resp {
            status,
            headers,
            text,
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.call(Method::GET, path, None).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Resp {
        self.call(Method::PUT, path, Some(body)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.call(Method::POST, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Resp {
        self.call(Method::DELETE, path, None).await
    }

    pub async fn create(&self, key: &str, body: Value) -> Resp {
        self.put(&format!("/artifactory/api/repositories/{key}"), body)
            .await
    }

    pub async fn repo(&self, key: &str) -> Resp {
        self.get(&format!("/artifactory/api/repositories/{key}"))
            .await
    }
}
