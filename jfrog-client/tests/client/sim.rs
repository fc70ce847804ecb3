//! The client against the JFrog simulator: the repository API, every error class, every
//! retry rule, descriptor-write serialisation and 200 concurrent creates.
//!
//! Timing is never asserted: retries are observed through the simulator's per-route request
//! counts and the client's retry metrics. Waits poll conditions with generous bounds.

use std::time::Duration;

use jfrog_client::artifactory::{ListFilter, RepositoryClass};
use jfrog_client::{Error, JfrogClient, RetryPolicy};
use jfrog_sim::{Fault, SimConfig, Simulator};
use serde_json::json;

const REPO: &str = "/artifactory/api/repositories/{key}";
const REPOS: &str = "/artifactory/api/repositories";

/// Short backoffs so retries are quick; `Retry-After` up to 10 s is waited for.
fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 5,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(200),
        max_retry_after: Duration::from_secs(10),
    }
}

async fn sim() -> Simulator {
    Simulator::start(SimConfig::default())
        .await
        .expect("simulator starts")
}

fn client_with(sim: &Simulator, token: &str) -> JfrogClient {
    JfrogClient::builder(sim.url())
        .access_token(token)
        .rate_limit(None)
        .retry_policy(fast_retries())
        .build()
        .expect("client builds")
}

fn client(sim: &Simulator) -> JfrogClient {
    client_with(sim, &sim.admin_token())
}

fn local(package_type: &str) -> serde_json::Value {
    json!({"rclass": "local", "packageType": package_type})
}

/// Polls `cond` every 10 ms for up to 60 s.
async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn repository_crud_and_lists() {
    let sim = sim().await;
    let c = client(&sim);
    let repos = c.artifactory().repositories();

    repos.create("libs-local", &local("maven")).await.unwrap();
    repos
        .create("docker-local", &local("docker"))
        .await
        .unwrap();
    repos
        .create(
            "npm-remote",
            &json!({"rclass": "remote", "packageType": "npm", "url": "https://registry.npmjs.org"}),
        )
        .await
        .unwrap();

    let got = repos.get("libs-local").await.unwrap();
    assert_eq!(got["key"], "libs-local");
    assert_eq!(got["rclass"], "local");
    // Server-side defaults were filled in.
    assert!(got.as_object().unwrap().len() > 3, "{got}");
    assert!(repos.exists("libs-local").await.unwrap());
    assert!(!repos.exists("nope").await.unwrap());

    let mut updated = got.clone();
    updated["description"] = json!("release artifacts");
    repos.update("libs-local", &updated).await.unwrap();
    assert_eq!(
        repos.get("libs-local").await.unwrap()["description"],
        "release artifacts"
    );

    let all = repos.list(&ListFilter::all()).await.unwrap();
    assert_eq!(all.len(), 3, "{all:?}");
    let locals = repos
        .list(&ListFilter::all().class(RepositoryClass::Local))
        .await
        .unwrap();
    let mut keys: Vec<_> = locals.iter().map(|r| r.key.as_str()).collect();
    keys.sort();
    assert_eq!(keys, ["docker-local", "libs-local"]);
    assert!(
        locals
            .iter()
            .all(|r| r.class() == Some(RepositoryClass::Local))
    );
    let maven = repos
        .list(&ListFilter::all().package_type("maven"))
        .await
        .unwrap();
    assert_eq!(maven.len(), 1);
    assert_eq!(maven[0].key, "libs-local");

    let configs = repos.list_configurations(&ListFilter::all()).await.unwrap();
    assert!(configs.bulk);
    assert_eq!(configs.repositories.len(), 3);
    assert_eq!(
        configs.get("LIBS-LOCAL").unwrap()["description"],
        "release artifacts"
    );
    let remote_configs = repos
        .list_configurations(&ListFilter::all().class(RepositoryClass::Remote))
        .await
        .unwrap();
    assert_eq!(remote_configs.repositories.len(), 1);
    assert_eq!(remote_configs.repositories[0]["key"], "npm-remote");
    assert_eq!(
        sim.request_count("GET", "/artifactory/api/repositories/configurations"),
        2
    );

    repos.delete("docker-local").await.unwrap();
    assert!(repos.get("docker-local").await.unwrap_err().is_not_found());
    assert!(
        repos
            .delete("docker-local")
            .await
            .unwrap_err()
            .is_not_found()
    );

    // Platforms that answer 400 to deleting an unknown key: confirmed gone by a GET...
    sim.add_fault(Fault::error(REPOS, 400, 1.0).method("DELETE").times(1));
    let e = repos.delete("docker-local").await.unwrap_err();
    assert!(e.is_not_found(), "{e}");
    // ...but a 400 for a repository that still exists stays a BadRequest.
    sim.add_fault(Fault::error(REPOS, 400, 1.0).method("DELETE").times(1));
    let e = repos.delete("libs-local").await.unwrap_err();
    assert!(matches!(e, Error::BadRequest { .. }), "{e}");
    assert!(repos.exists("libs-local").await.unwrap());
    sim.shutdown().await;
}

#[tokio::test]
async fn configurations_fall_back_to_per_key_reads_on_older_platforms() {
    let sim = sim().await;
    let c = client(&sim);
    let repos = c.artifactory().repositories();
    for (key, pt) in [
        ("a-local", "maven"),
        ("b-local", "npm"),
        ("c-local", "maven"),
    ] {
        repos.create(key, &local(pt)).await.unwrap();
    }
    let bulk = repos
        .list_configurations(&ListFilter::all().package_type("maven"))
        .await
        .unwrap();
    assert!(bulk.bulk);
    // An older platform without the endpoint answers 404.
    sim.add_fault(Fault::error(
        "/artifactory/api/repositories/configurations",
        404,
        1.0,
    ));
    let fallback = repos
        .list_configurations(&ListFilter::all().package_type("maven"))
        .await
        .unwrap();
    assert!(!fallback.bulk);
    let keys = |c: &jfrog_client::artifactory::RepositoryConfigurations| {
        let mut k: Vec<String> = c
            .repositories
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_owned())
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&fallback), ["a-local", "c-local"]);
    assert_eq!(keys(&bulk), keys(&fallback));
    assert_eq!(
        sim.request_count("GET", REPO),
        2,
        "{:?}",
        sim.request_counts()
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn system_ping_and_version_and_credentials() {
    let sim = sim().await;
    let c = client(&sim);
    c.artifactory().ping().await.unwrap();
    c.access().ping().await.unwrap();
    let v = c.artifactory().version().await.unwrap();
    assert_eq!(v.version, SimConfig::default().artifactory_version);

    // Basic authentication works as well as a token.
    sim.basic_user("alice", "alice-password", true);
    let basic = JfrogClient::builder(sim.url())
        .basic_auth("alice", "alice-password")
        .rate_limit(None)
        .build()
        .unwrap();
    basic.artifactory().version().await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn every_error_class() {
    let sim = sim().await;
    let c = client(&sim);
    let repos = c.artifactory().repositories();

    // NotFound.
    let e = repos.get("missing").await.unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");

    // BadRequest with JFrog's message: unknown package type, duplicate key in another case.
    let e = repos
        .create("x-local", &local("nosuchtype"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::BadRequest { status: 400, .. }), "{e}");
    assert!(!e.jfrog_message().unwrap().is_empty());
    repos.create("dup-local", &local("generic")).await.unwrap();
    let e = repos
        .create("DUP-local", &local("generic"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::BadRequest { .. }), "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with("PUT /artifactory/api/repositories/{key}: 400 bad request: "),
        "{shown}"
    );

    // Unauthorized: a token the platform does not know.
    let e = client_with(&sim, "not-a-valid-token")
        .artifactory()
        .version()
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Unauthorized { .. }), "{e}");

    // Forbidden: a valid token without admin rights writing configuration.
    let reader = client_with(&sim, &sim.issue_token(false));
    let e = reader
        .artifactory()
        .repositories()
        .create("r-local", &local("generic"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Forbidden { .. }), "{e}");

    // Conflict.
    sim.add_fault(Fault::error(REPOS, 409, 1.0).method("POST").times(1));
    let e = repos
        .update("dup-local", &local("generic"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Conflict { .. }), "{e}");

    // RateLimited: Retry-After beyond what the client waits for in-process.
    sim.add_fault(Fault::rate_limit(REPOS, Duration::from_secs(3600), 1.0).times(1));
    let e = repos.list(&ListFilter::all()).await.unwrap_err();
    assert!(matches!(e, Error::RateLimited { .. }), "{e}");
    assert_eq!(e.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(sim.request_count("GET", REPOS), 1, "not retried");

    // Server: a 5xx on a create is not retried.
    sim.add_fault(Fault::error(REPOS, 500, 1.0).method("PUT").times(1));
    let e = repos
        .create("s-local", &local("generic"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Server { status: 500, .. }), "{e}");

    // Access and Xray error bodies are parsed in their own formats.
    sim.add_fault(Fault::error("/access/api/v1/system/ping", 400, 1.0).times(1));
    let e = c.access().ping().await.unwrap_err();
    assert!(matches!(e, Error::BadRequest { .. }), "{e}");
    assert!(e.jfrog_message().unwrap().contains("BAD_REQUEST"), "{e}");
    sim.add_fault(Fault::error("/xray/api/v1/system/ping", 403, 1.0).times(1));
    let e = c.xray().ping().await.unwrap_err();
    assert!(matches!(e, Error::Forbidden { .. }), "{e}");
    assert_eq!(e.jfrog_message(), Some("Forbidden"), "{e}");

    // Transport: nothing listens any more.
    let url = sim.url();
    sim.shutdown().await;
    let gone = JfrogClient::builder(url)
        .access_token("t")
        .rate_limit(None)
        .retry_policy(RetryPolicy {
            max_retries: 1,
            ..fast_retries()
        })
        .connect_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let e = gone.artifactory().ping().await.unwrap_err();
    assert!(matches!(e, Error::Transport { .. }), "{e}");
    // The cause is shown, the URL is not.
    let shown = e.to_string();
    assert!(shown.contains("onnect"), "{shown}");
    assert!(!shown.contains("127.0.0.1"), "{shown}");
    assert_eq!(
        gone.metrics()
            .retry_count("artifactory", "GET", "transport"),
        1
    );
}

#[tokio::test]
async fn rate_limit_429_is_honoured() {
    let sim = sim().await;
    let c = client(&sim);
    let repos = c.artifactory().repositories();
    // One 429 with Retry-After: 1 on the list; the client waits and tries again.
    sim.add_fault(
        Fault::rate_limit(REPOS, Duration::from_secs(1), 1.0)
            .method("GET")
            .times(1),
    );
    repos.list(&ListFilter::all()).await.unwrap();
    assert_eq!(sim.request_count("GET", REPOS), 2);
    assert_eq!(
        c.metrics()
            .retry_count("artifactory", "GET", "rate_limited"),
        1
    );
    // A 429 on a create is retried too: the platform refused it without processing it.
    sim.add_fault(
        Fault::rate_limit(REPOS, Duration::from_secs(1), 1.0)
            .method("PUT")
            .times(1),
    );
    repos.create("after-429", &local("generic")).await.unwrap();
    assert_eq!(sim.request_count("PUT", REPO), 2);
    assert!(repos.exists("after-429").await.unwrap());
    sim.shutdown().await;
}

/// A call that runs out of retries on a 429 still leaves the platform paused for the
/// `Retry-After`: the next call, from any client of that platform, waits it out instead of
/// meeting the storm at once.
#[tokio::test]
async fn a_429_that_ends_the_retries_still_pauses_the_platform() {
    let sim = sim().await;
    let c = JfrogClient::builder(sim.url())
        .access_token(sim.admin_token())
        .rate_limit(None)
        .retry_policy(RetryPolicy {
            max_retries: 0,
            ..fast_retries()
        })
        .build()
        .unwrap();
    let repos = c.artifactory().repositories();
    sim.add_fault(
        Fault::rate_limit(REPOS, Duration::from_secs(1), 1.0)
            .method("GET")
            .times(1),
    );
    let e = repos.list(&ListFilter::all()).await.unwrap_err();
    assert!(matches!(e, Error::RateLimited { .. }), "{e}");
    let faulted = std::time::Instant::now();
    repos.list(&ListFilter::all()).await.unwrap();
    assert!(
        faulted.elapsed() >= Duration::from_millis(900),
        "the next call went out {:?} after the 429, inside its Retry-After",
        faulted.elapsed()
    );
    assert_eq!(sim.request_count("GET", REPOS), 2);
    sim.shutdown().await;
}

#[tokio::test]
async fn server_errors_on_get_are_retried_within_budget() {
    let sim = sim().await;
    let c = client(&sim);
    let repos = c.artifactory().repositories();
    repos.create("g-local", &local("generic")).await.unwrap();

    sim.add_fault(Fault::error(REPOS, 500, 1.0).method("GET").times(2));
    repos.get("g-local").await.unwrap();
    assert_eq!(sim.request_count("GET", REPO), 3);
    assert_eq!(c.metrics().retry_count("artifactory", "GET", "server"), 2);

    // 503 with Retry-After is honoured as well.
    sim.add_fault(Fault {
        retry_after: Some(Duration::from_secs(1)),
        ..Fault::error(REPOS, 503, 1.0).method("GET").times(1)
    });
    repos.get("g-local").await.unwrap();
    assert_eq!(sim.request_count("GET", REPO), 5);

    // The budget is bounded: a persistent 502 ends after max_retries + 1 attempts.
    sim.reset_counts();
    sim.add_fault(Fault::error(REPOS, 502, 1.0).method("GET"));
    let e = repos.get("g-local").await.unwrap_err();
    assert!(matches!(e, Error::Server { status: 502, .. }), "{e}");
    assert_eq!(sim.request_count("GET", REPO), 6);
    sim.shutdown().await;
}

#[tokio::test]
async fn create_is_never_blindly_retried_after_a_lost_response() {
    let sim = sim().await;
    let c = client(&sim);
    let repos = c.artifactory().repositories();

    sim.add_fault(Fault::drop_after_commit("PUT", REPOS).times(1));
    let e = repos
        .create("lost-local", &local("generic"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Indeterminate { .. }), "{e}");
    assert!(e.is_transient());
    // Exactly one create reached the platform, and it was committed.
    assert_eq!(sim.request_count("PUT", REPO), 1);
    assert!(sim.repository("lost-local").is_some());
    // The documented contract: observe by key before creating again.
    assert!(repos.exists("lost-local").await.unwrap());

    // An idempotent call with a lost response is retried: the update is applied once more.
    sim.add_fault(Fault::drop_after_commit("POST", REPOS).times(1));
    let mut cfg = repos.get("lost-local").await.unwrap();
    cfg["description"] = json!("updated");
    repos.update("lost-local", &cfg).await.unwrap();
    assert_eq!(sim.request_count("POST", REPO), 2);

    // A lost response on a delete is retried; the retry then finds nothing to delete.
    sim.add_fault(Fault::drop_after_commit("DELETE", REPOS).times(1));
    let e = repos.delete("lost-local").await.unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert_eq!(sim.request_count("DELETE", REPO), 2);
    sim.shutdown().await;
}

#[tokio::test]
async fn descriptor_merge_failures_are_absorbed() {
    let sim = Simulator::start(SimConfig {
        descriptor_merge_emulation: true,
        write_latency: Duration::from_secs(3),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let c = client(&sim);
    // Another writer (e.g. a person in the UI, another tool) that does not share our lock.
    let other = JfrogClient::builder(sim.url())
        .access_token(sim.admin_token())
        .rate_limit(None)
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    let first = tokio::spawn(async move {
        other
            .artifactory()
            .repositories()
            .create("other-local", &local("generic"))
            .await
    });
    wait_for("the other write to arrive", || {
        sim.request_count("PUT", REPO) == 1
    })
    .await;
    // Our write overlaps the other one, so its first attempt fails to merge; the retry
    // succeeds.
    c.artifactory()
        .repositories()
        .create("ours-local", &local("generic"))
        .await
        .unwrap();
    first.await.unwrap().unwrap();
    assert!(
        c.metrics()
            .retry_count("artifactory", "PUT", "descriptor_merge")
            >= 1
    );
    assert!(sim.request_count("PUT", REPO) >= 3);
    assert!(sim.repository("ours-local").is_some());
    assert!(sim.repository("other-local").is_some());
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_creates_all_succeed() {
    let sim = Simulator::start(SimConfig {
        descriptor_merge_emulation: true,
        // Writes take time, so unserialised writes would overlap and fail.
        write_latency: Duration::from_millis(2),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let c = client(&sim);
    let started = std::time::Instant::now();
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move {
                c.artifactory()
                    .repositories()
                    .create(&format!("repo-{i:03}"), &local("generic"))
                    .await
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    // Measured, not asserted.
    eprintln!(
        "200 concurrent creates (2 ms simulated write latency) took {:?}",
        started.elapsed()
    );
    // Serialised writes never tripped the merge failure: exactly one PUT per repository.
    assert_eq!(sim.request_count("PUT", REPO), 200);
    assert_eq!(
        c.metrics()
            .retry_count("artifactory", "PUT", "descriptor_merge"),
        0
    );
    assert_eq!(sim.repository_count(), 200);
    let all = c
        .artifactory()
        .repositories()
        .list(&ListFilter::all())
        .await
        .unwrap();
    assert_eq!(all.len(), 200);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_of_one_platform_share_the_descriptor_lock() {
    let sim = Simulator::start(SimConfig {
        descriptor_merge_emulation: true,
        write_latency: Duration::from_millis(2),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    // Two ProviderConfigs with different credentials for the same platform, in one
    // process (one `Platforms`).
    let platforms = jfrog_client::Platforms::new();
    let shared = |token: &str| {
        JfrogClient::builder(sim.url())
            .access_token(token)
            .rate_limit(None)
            .retry_policy(fast_retries())
            .platforms(&platforms)
            .build()
            .expect("client builds")
    };
    let a = shared(&sim.admin_token());
    let b = shared(&sim.issue_token(true));
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let c = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move {
                c.artifactory()
                    .repositories()
                    .create(&format!("shared-{i:03}"), &local("generic"))
                    .await
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(sim.request_count("PUT", REPO), 100);
    for c in [&a, &b] {
        assert_eq!(
            c.metrics()
                .retry_count("artifactory", "PUT", "descriptor_merge"),
            0
        );
    }
    sim.shutdown().await;
}

#[tokio::test]
async fn project_attachment_and_project_filters() {
    let sim = sim().await;
    let c = client(&sim);
    let repos = c.artifactory().repositories();
    repos.create("p-local", &local("generic")).await.unwrap();
    repos.create("q-local", &local("generic")).await.unwrap();
    // Attaching needs the project (made in JFrog).
    assert!(sim.put_object(
        "access_projects",
        "team1",
        json!({"project_key": "team1", "display_name": "Team 1"})
    ));

    repos.attach_project("p-local", "team1").await.unwrap();
    assert_eq!(repos.get("p-local").await.unwrap()["projectKey"], "team1");
    let listed = repos
        .list(&ListFilter::all().project("team1"))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].key, "p-local");
    let configs = repos
        .list_configurations(&ListFilter::all().project("team1"))
        .await
        .unwrap();
    assert_eq!(configs.repositories.len(), 1);
    assert_eq!(configs.repositories[0]["key"], "p-local");

    // Access errors come back typed, with Access's message.
    let e = repos
        .attach_project("p-local", "Bad_Key")
        .await
        .unwrap_err();
    assert!(matches!(e, Error::BadRequest { .. }), "{e}");
    assert!(e.to_string().starts_with(
        "PUT /access/api/v1/projects/_/attach/repositories/{key}/{project_key}: 400 bad request: "
    ));
    let e = repos.attach_project("nope", "team1").await.unwrap_err();
    assert!(e.is_not_found(), "{e}");

    repos.detach_project("p-local").await.unwrap();
    assert!(
        repos
            .list(&ListFilter::all().project("team1"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        sim.request_count(
            "PUT",
            "/access/api/v1/projects/_/attach/repositories/{key}/{project_key}"
        ),
        3
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn a_timed_out_create_is_indeterminate_and_never_resent() {
    let sim = sim().await;
    let c = JfrogClient::builder(sim.url())
        .access_token(sim.admin_token())
        .rate_limit(None)
        .retry_policy(fast_retries())
        .request_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    // The platform is slow: the client stops waiting before the create is answered.
    sim.add_fault(
        Fault::latency(REPOS, Duration::from_secs(2), Duration::ZERO)
            .method("PUT")
            .times(1),
    );
    let repos = c.artifactory().repositories();
    let e = repos
        .create("slow-local", &local("generic"))
        .await
        .unwrap_err();
    assert!(e.is_indeterminate(), "{e}");
    assert_eq!(sim.request_count("PUT", REPO), 1, "never resent");
    // The caller's side of the contract: observe by key, create only when absent. (The
    // simulator abandons a request whose client went away, so here it is absent; an
    // Artifactory that finished the write would be observed as present.)
    if !repos.exists("slow-local").await.unwrap() {
        repos.create("slow-local", &local("generic")).await.unwrap();
    }
    assert!(repos.exists("slow-local").await.unwrap());
    assert!(sim.request_count("PUT", REPO) <= 2);

    // A generic idempotent call with its own, longer timeout rides out the same latency.
    sim.add_fault(
        Fault::latency(REPOS, Duration::from_millis(800), Duration::ZERO)
            .method("GET")
            .times(1),
    );
    let listed: serde_json::Value = c
        .request(
            jfrog_client::Service::Artifactory,
            jfrog_client::Method::GET,
            "/api/repositories",
            jfrog_client::Idempotency::Idempotent,
        )
        .timeout(Duration::from_secs(30))
        .send_json()
        .await
        .unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
    assert_eq!(sim.request_count("GET", REPOS), 1);
    sim.shutdown().await;
}

/// Measures (does not assert) bulk versus per-key reads of 10,000 repositories; run with
/// `cargo test -p jfrog-client --test client sim:: -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement, run on demand"]
async fn measure_configurations_of_ten_thousand_repositories() {
    let sim = sim().await;
    for i in 0..10_000 {
        assert!(sim.put_repository_raw(
            &format!("m-{i:05}"),
            json!({"rclass": "local", "packageType": "generic"})
        ));
    }
    let c = client(&sim);
    let repos = c.artifactory().repositories();
    let started = std::time::Instant::now();
    let bulk = repos.list_configurations(&ListFilter::all()).await.unwrap();
    let bulk_time = started.elapsed();
    assert!(bulk.bulk);
    assert_eq!(bulk.repositories.len(), 10_000);
    sim.add_fault(Fault::error(
        "/artifactory/api/repositories/configurations",
        404,
        1.0,
    ));
    let started = std::time::Instant::now();
    let per_key = repos.list_configurations(&ListFilter::all()).await.unwrap();
    let per_key_time = started.elapsed();
    assert!(!per_key.bulk);
    assert_eq!(per_key.repositories.len(), 10_000);
    eprintln!(
        "10,000 repository configurations: bulk {bulk_time:?} (1 request), per-key fallback {per_key_time:?} ({} requests)",
        sim.request_count("GET", REPO) + 1
    );
    sim.shutdown().await;
}
