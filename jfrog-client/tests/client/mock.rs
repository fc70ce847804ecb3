//! Calls the simulator does not serve, against a minimal axum server on loopback that
//! records what it received.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use jfrog_client::JfrogClient;

type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

async fn config_sync(
    State(seen): State<Seen>,
    Path(key): Path<String>,
    headers: HeaderMap,
) -> StatusCode {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    seen.lock().unwrap().push((key, auth));
    StatusCode::OK
}

#[tokio::test]
async fn federation_config_sync() {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route(
            "/artifactory/api/federation/configSync/{key}",
            post(config_sync),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let c = JfrogClient::builder(url)
        .access_token("sync-token")
        .rate_limit(None)
        .build()
        .unwrap();
    c.artifactory()
        .repositories()
        .federation_config_sync("fed-maven")
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [("fed-maven".to_owned(), Some("Bearer sync-token".to_owned()))]
    );
}

/// `version_once`: one request per platform however many callers and clients of it ask at
/// once; a failure is not kept; a client with its own state asks for itself.
#[tokio::test]
async fn version_is_asked_once_per_platform() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let asked = Arc::new(AtomicUsize::new(0));
    let a = asked.clone();
    let app = Router::new().route(
        "/artifactory/api/system/version",
        axum::routing::get(move || {
            let a = a.clone();
            async move {
                // The first answer is a refusal (not retried); the others a version, late
                // enough that the callers overlap.
                if a.fetch_add(1, Ordering::SeqCst) == 0 {
                    return (StatusCode::FORBIDDEN, String::from("{}"));
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                (StatusCode::OK, String::from(r#"{"version":"7.104.5"}"#))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let platforms = jfrog_client::Platforms::new();
    let client = |shared: bool| {
        let b = JfrogClient::builder(url.clone())
            .access_token("t")
            .rate_limit(None);
        let b = if shared { b.platforms(&platforms) } else { b };
        b.build().unwrap()
    };
    let (one, two) = (client(true), client(true));
    assert!(one.artifactory().version_once().await.is_err());
    let calls = (0..8).map(|i| {
        let c = if i % 2 == 0 { one.clone() } else { two.clone() };
        async move { c.artifactory().version_once().await.map(|v| v.version) }
    });
    for v in futures::future::join_all(calls).await {
        assert_eq!(v.unwrap(), "7.104.5");
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "the refusal, then one request"
    );
    let own = client(false);
    assert_eq!(
        own.artifactory().version_once().await.unwrap().version,
        "7.104.5"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 3);
}
