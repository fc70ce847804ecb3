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
