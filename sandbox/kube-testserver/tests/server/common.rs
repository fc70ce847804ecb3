//! Helpers shared by the integration tests: a server per test, kube-rs clients and kubectl.

use kube::api::{Api, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;
use kube::{Client, Config as KubeConfig};
use kube_testserver::{Config, TestServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const WIDGET_CRD: &str = include_str!("../fixtures/widget-crd.yaml");
pub const WIDGET: &str = include_str!("../fixtures/widget.yaml");

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub async fn server() -> TestServer {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .try_init();
    TestServer::start(Config {
        bookmark_interval: Duration::from_millis(500),
        ..Config::default()
    })
    .await
    .expect("server starts")
}

pub async fn client_for(server: &TestServer, token: &str) -> Client {
    let kc =
        kube::config::Kubeconfig::from_yaml(&server.kubeconfig(token)).expect("kubeconfig parses");
    let cfg = KubeConfig::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .expect("kube config");
    Client::try_from(cfg).expect("client")
}

pub async fn admin(server: &TestServer) -> Client {
    client_for(server, &server.admin_token()).await
}

/// Polls `f` until it returns Some, for up to 60 s.
pub async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn crds(
    client: &Client,
) -> Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>
{
    Api::all(client.clone())
}

/// Installs the Widget CRD and waits until it is Established.
pub async fn install_widget_crd(client: &Client) {
    let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition = serde_yaml::from_str(WIDGET_CRD).expect("crd yaml");
    let api = crds(client);
    api.create(&PostParams::default(), &crd)
        .await
        .expect("crd created");
    eventually("Established", || {
        let api = api.clone();
        async move {
            let c = api.get("widgets.example.crossplane.io").await.ok()?;
            let conds = c.status?.conditions?;
            conds
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
                .then_some(())
        }
    })
    .await;
}

pub fn widget_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.crossplane.io", "v1alpha1", "Widget"),
        "widgets",
    )
}

pub fn widgets(client: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &widget_resource())
}

pub fn widget(name: &str, colour: &str) -> DynamicObject {
    let v: Value = serde_json::json!({
        "apiVersion": "example.crossplane.io/v1alpha1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"forProvider": {"colour": colour}},
    });
    serde_json::from_value(v).expect("widget")
}

/// Runs kubectl against a server with a kubeconfig in a temp dir.
pub struct Kubectl {
    pub dir: PathBuf,
    kubeconfig: PathBuf,
}

impl Kubectl {
    pub fn new(server: &TestServer) -> Kubectl {
        Self::with_token(server, &server.admin_token())
    }

    pub fn with_token(server: &TestServer, token: &str) -> Kubectl {
        let dir = std::env::temp_dir().join(format!("kube-testserver-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, server.kubeconfig(token)).expect("kubeconfig written");
        Kubectl { dir, kubeconfig }
    }

    /// Runs kubectl; returns (success, stdout, stderr).
    pub async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let out = tokio::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .env_remove("KUBECONFIG")
            .output()
            .await
            .unwrap_or_else(|e| {
                panic!("kubectl must be on PATH to run these tests (tried to run `kubectl`): {e}")
            });
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs kubectl and requires success; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "kubectl {args:?} failed:\nstdout: {out}\nstderr: {err}");
        out
    }

    /// Runs kubectl and requires failure; returns stderr.
    pub async fn fails(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(
            !ok,
            "kubectl {args:?} should have failed:\nstdout: {out}\nstderr: {err}"
        );
        err
    }

    pub fn write(&self, name: &str, content: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, content).expect("file written");
        p.to_string_lossy().into_owned()
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
