//! The API semantics clients rely on, driven with kube-rs: watches (order, bookmarks, 410,
//! selectors, streaming lists), paging, conflicts, status subresource and generation, garbage
//! collection, selectors, dry run, namespaces, tables, events views and RBAC.

use crate::common::*;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, Namespace, Secret};
use k8s_openapi::api::events::v1::Event as EventV1;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>()},
        "data": {"k": "v"},
    }))
    .expect("configmap")
}

fn rv_of<K: kube::Resource>(o: &K) -> u64 {
    o.meta()
        .resource_version
        .as_deref()
        .unwrap_or("0")
        .parse()
        .expect("numeric resourceVersion")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_delivers_every_change_in_order_with_bookmarks() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let start = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let mut stream = api
        .watch(&WatchParams::default().timeout(60), &start)
        .await
        .expect("watch")
        .boxed();
    let mut expected = Vec::new();
    for i in 0..10 {
        let name = format!("c{i}");
        let c = api
            .create(&PostParams::default(), &cm(&name, &[]))
            .await
            .expect("create");
        expected.push(("ADDED", name.clone(), rv_of(&c)));
        let c = api
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"k": format!("v{i}")}})),
            )
            .await
            .expect("patch");
        expected.push(("MODIFIED", name.clone(), rv_of(&c)));
        if i % 2 == 0 {
            api.delete(&name, &DeleteParams::default())
                .await
                .expect("delete");
            expected.push(("DELETED", name.clone(), 0));
        }
    }
    let mut seen = Vec::new();
    let mut bookmark = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while seen.len() < expected.len() || bookmark.is_none() {
        let ev = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("events in time")
            .expect("stream open")
            .expect("event");
        match ev {
            WatchEvent::Added(c) => seen.push(("ADDED", c.name_any(), rv_of(&c))),
            WatchEvent::Modified(c) => seen.push(("MODIFIED", c.name_any(), rv_of(&c))),
            WatchEvent::Deleted(c) => seen.push(("DELETED", c.name_any(), rv_of(&c))),
            WatchEvent::Bookmark(b) => {
                if seen.len() == expected.len() {
                    bookmark = Some(
                        b.metadata
                            .resource_version
                            .parse::<u64>()
                            .expect("bookmark rv"),
                    );
                }
            }
            WatchEvent::Error(e) => panic!("watch error: {e:?}"),
        }
    }
    let kinds: Vec<(&str, String)> = seen.iter().map(|(k, n, _)| (*k, n.clone())).collect();
    let want: Vec<(&str, String)> = expected.iter().map(|(k, n, _)| (*k, n.clone())).collect();
    assert_eq!(kinds, want, "every change, in order");
    for w in seen.windows(2) {
        assert!(
            w[0].2 < w[1].2,
            "resourceVersions strictly increase: {:?}",
            w
        );
    }
    for (s, e) in seen.iter().zip(&expected) {
        if e.2 != 0 {
            assert_eq!(s.2, e.2, "event carries the written resourceVersion");
        }
    }
    assert!(
        bookmark.expect("bookmark") >= seen.last().expect("events").2,
        "bookmark is not behind delivered events"
    );

    // Resuming from any delivered resourceVersion replays exactly what came after it.
    let (_, name, rv) = seen[5].clone();
    let mut resumed = api
        .watch(&WatchParams::default().timeout(30), &rv.to_string())
        .await
        .expect("watch")
        .boxed();
    let first = resumed.next().await.expect("event").expect("ok");
    match first {
        WatchEvent::Added(c) | WatchEvent::Modified(c) | WatchEvent::Deleted(c) => {
            assert_eq!(rv_of(&c), seen[6].2, "resume after {name}@{rv}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_from_too_old_resource_version_is_410_expired() {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let server = kube_testserver::TestServer::start(kube_testserver::Config {
        watch_history: 5,
        ..Default::default()
    })
    .await
    .expect("server");
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let first = api
        .create(&PostParams::default(), &cm("old", &[]))
        .await
        .expect("create");
    for i in 0..10 {
        api.patch(
            "old",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": i.to_string()}})),
        )
        .await
        .expect("patch");
    }
    let mut s = api
        .watch(
            &WatchParams::default().timeout(10),
            &first.resource_version().expect("rv"),
        )
        .await
        .expect("watch")
        .boxed();
    match s.next().await.expect("an event").expect("decoded") {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
            assert!(
                e.message.starts_with("too old resource version"),
                "{}",
                e.message
            );
        }
        other => panic!("expected 410, got {other:?}"),
    }
    // A watcher (list + watch) recovers from it by relisting.
    let cms = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed()
        .try_next()
        .await
        .expect("watcher")
        .expect("object");
    assert_eq!(cms.name_any(), "old");
}

/// Expects the next event of a watch resumed after a restart or an expiry to be 410 Expired.
async fn expect_expired(api: &Api<ConfigMap>, rv: u64) {
    let mut s = api
        .watch(&WatchParams::default().timeout(10), &rv.to_string())
        .await
        .expect("watch")
        .boxed();
    match s.next().await.expect("an event").expect("decoded") {
        WatchEvent::Error(e) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired")),
        other => panic!("expected 410 Expired, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_drops_connections_keeps_state_and_expires_watches() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let a = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .expect("create");
    let mut live = api
        .watch(&WatchParams::default().timeout(60), &rv_of(&a).to_string())
        .await
        .expect("watch")
        .boxed();

    server.restart(Duration::from_secs(2));
    // The open watch ends with its connection.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(_)) = live.next().await {}
    })
    .await;
    assert!(ended.is_ok(), "the watch did not end with the restart");
    // Down: connections are refused.
    assert!(api.get("a").await.is_err(), "answered while down");
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Up again at the same address with the same objects; old resourceVersions are gone.
    let again = api.get("a").await.expect("get after the restart");
    assert_eq!(again.metadata.uid, a.metadata.uid);
    expect_expired(&api, rv_of(&a)).await;
    // A fresh list can be watched from.
    let list = api.list(&ListParams::default()).await.expect("list");
    let list_rv = list.metadata.resource_version.expect("list rv");
    let mut fresh = api
        .watch(&WatchParams::default().timeout(30), &list_rv)
        .await
        .expect("watch")
        .boxed();
    api.create(&PostParams::default(), &cm("b", &[]))
        .await
        .expect("create b");
    match fresh.next().await.expect("event").expect("decoded") {
        WatchEvent::Added(c) => assert_eq!(c.name_any(), "b"),
        other => panic!("expected b added, got {other:?}"),
    }

    // Watches expiring without a restart: the stream ends, resuming is 410.
    server.expire_watches();
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(_)) = fresh.next().await {}
    })
    .await;
    assert!(ended.is_ok(), "the watch did not end when expired");
    expect_expired(&api, list_rv.parse().expect("numeric rv")).await;
    let counts = server.read_counts();
    assert!(counts["list"]["admin"].as_u64() >= Some(1), "{counts}");
    assert!(counts["watch"]["admin"].as_u64() >= Some(4), "{counts}");
}

/// In-process observation (`sandbox bench`): the objects stored, then each committed change
/// of its resource and namespace only, the objects as stored (the resourceVersion a client
/// reads); it ends with the server's watches, and observing again starts from what is
/// stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observing_in_process_sees_what_is_committed() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let other: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    let a = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .expect("create a");
    let mut observed = server.observer().observe("", "configmaps", Some("default"));
    let names = |objs: &[std::sync::Arc<serde_json::Value>]| -> Vec<String> {
        objs.iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(names(&observed.objects), ["a"]);
    other
        .create(&PostParams::default(), &cm("elsewhere", &[]))
        .await
        .expect("create in another namespace");
    let b = api
        .create(&PostParams::default(), &cm("b", &[("app", "x")]))
        .await
        .expect("create b");
    let (obj, deleted) = observed.next().await.expect("b committed");
    assert!(!deleted);
    assert_eq!(obj["metadata"]["name"], "b", "only its namespace: {obj}");
    assert_eq!(obj["metadata"]["labels"]["app"], "x");
    assert_eq!(
        obj["metadata"]["resourceVersion"].as_str(),
        b.metadata.resource_version.as_deref()
    );
    api.delete("a", &Default::default())
        .await
        .expect("delete a");
    let (obj, deleted) = observed.next().await.expect("a deleted");
    assert!(deleted);
    assert_eq!(obj["metadata"]["uid"].as_str(), a.metadata.uid.as_deref());

    // The server ends its watches: the observation ends too, and starts again from what is
    // stored.
    server.expire_watches();
    assert!(observed.next().await.is_none(), "ended with the watches");
    let again = server.observer().observe("", "configmaps", Some("default"));
    assert_eq!(names(&again.objects), ["b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_with_label_selector_sees_objects_enter_and_leave() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut s = api
        .watch(&WatchParams::default().labels("app=x").timeout(30), "0")
        .await
        .expect("watch")
        .boxed();
    api.create(&PostParams::default(), &cm("a", &[("app", "y")]))
        .await
        .expect("create");
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "x"}}})),
    )
    .await
    .expect("label");
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "z"}}})),
    )
    .await
    .expect("unlabel");
    let mut types = Vec::new();
    while types.len() < 2 {
        match s.next().await.expect("event").expect("ok") {
            WatchEvent::Added(_) => types.push("ADDED"),
            WatchEvent::Modified(_) => types.push("MODIFIED"),
            WatchEvent::Deleted(_) => types.push("DELETED"),
            _ => {}
        }
    }
    assert_eq!(types, ["ADDED", "DELETED"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_watcher_gets_initial_events_end_bookmark() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    for i in 0..3 {
        api.create(&PostParams::default(), &cm(&format!("s{i}"), &[]))
            .await
            .expect("create");
    }
    let mut names = Vec::new();
    let mut stream = watcher(api, watcher::Config::default().streaming_lists()).boxed();
    loop {
        match tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("in time")
            .expect("open")
            .expect("no error")
        {
            watcher::Event::InitApply(c) => names.push(c.name_any()),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    names.sort();
    assert_eq!(names, ["s0", "s1", "s2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paged_list_returns_every_object_once() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    for i in 0..25 {
        api.create(
            &PostParams::default(),
            &cm(&format!("p{i:02}"), &[("paged", "yes")]),
        )
        .await
        .expect("create");
    }
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut lp = ListParams::default().labels("paged=yes").limit(10);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = api.list(&lp).await.expect("page");
        pages += 1;
        assert!(page.items.len() <= 10);
        names.extend(page.items.iter().map(|c| c.name_any()));
        token = page.metadata.continue_.filter(|c| !c.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3);
    let want: Vec<String> = (0..25).map(|i| format!("p{i:02}")).collect();
    assert_eq!(names, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_update_and_duplicate_create_conflict() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let c = api
        .create(&PostParams::default(), &cm("c", &[]))
        .await
        .expect("create");
    let mut a = c.clone();
    a.data = Some(BTreeMap::from([("k".into(), "a".into())]));
    api.replace("c", &PostParams::default(), &a)
        .await
        .expect("first update");
    let mut b = c.clone();
    b.data = Some(BTreeMap::from([("k".into(), "b".into())]));
    match api.replace("c", &PostParams::default(), &b).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
            assert_eq!(
                e.message,
                "Operation cannot be fulfilled on configmaps \"c\": the object has been modified; please apply your changes to the latest version and try again"
            );
        }
        other => panic!("expected 409, got {other:?}"),
    }
    match api.create(&PostParams::default(), &cm("c", &[])).await {
        Err(kube::Error::Api(e)) => assert_eq!(
            (e.code, e.reason.as_str(), e.message.as_str()),
            (409, "AlreadyExists", "configmaps \"c\" already exists")
        ),
        other => panic!("expected 409, got {other:?}"),
    }
    match api.get("nope").await {
        Err(kube::Error::Api(e)) => assert_eq!(
            (e.code, e.reason.as_str(), e.message.as_str()),
            (404, "NotFound", "configmaps \"nope\" not found")
        ),
        other => panic!("expected 404, got {other:?}"),
    }
    // A no-op update changes nothing, not even the resourceVersion.
    let cur = api.get("c").await.expect("get");
    let same = api
        .replace("c", &PostParams::default(), &cur)
        .await
        .expect("no-op");
    assert_eq!(cur.resource_version(), same.resource_version());
    // generateName.
    let g: ConfigMap =
        serde_json::from_value(json!({"metadata": {"generateName": "gen-"}})).expect("cm");
    let g = api
        .create(&PostParams::default(), &g)
        .await
        .expect("generated");
    assert!(
        g.name_any().starts_with("gen-") && g.name_any().len() == 9,
        "{}",
        g.name_any()
    );
    // Dry run leaves nothing behind.
    let dry = api
        .create(
            &PostParams {
                dry_run: true,
                ..Default::default()
            },
            &cm("dry", &[]),
        )
        .await
        .expect("dry run");
    assert_eq!(dry.name_any(), "dry");
    assert!(api.get_opt("dry").await.expect("get").is_none());
    // Delete preconditions.
    let dp = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("wrong".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    match api.delete("c", &dp).await {
        Err(kube::Error::Api(e)) => assert_eq!(e.code, 409),
        other => panic!("expected 409, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_subresource_and_generation() {
    let server = server().await;
    let client = admin(&server).await;
    install_widget_crd(&client).await;
    let api = widgets(&client, "default");
    let mut w = widget("g", "red");
    w.data["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    let w = api
        .create(&PostParams::default(), &w)
        .await
        .expect("create");
    assert!(w.data.get("status").is_none(), "status ignored on create");
    assert_eq!(w.metadata.generation, Some(1));
    assert_eq!(
        w.data["spec"]["forProvider"]["mode"], "fast",
        "default applied"
    );
    let w = api.patch_status("g", &PatchParams::default(), &Patch::Merge(json!({"spec": {"forProvider": {"colour": "blue"}}, "status": {"atProvider": {"x": 1}}}))).await.expect("status");
    assert_eq!(
        w.data["spec"]["forProvider"]["colour"], "red",
        "status writes leave spec alone"
    );
    assert_eq!(w.data["status"]["atProvider"]["x"], 1);
    assert_eq!(
        w.metadata.generation,
        Some(1),
        "status writes do not bump generation"
    );
    let w = api
        .patch(
            "g",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {"a": "b"}}, "status": {"atProvider": {"x": 2}}}),
            ),
        )
        .await
        .expect("meta");
    assert_eq!(
        w.metadata.generation,
        Some(1),
        "metadata changes do not bump generation"
    );
    assert_eq!(
        w.data["status"]["atProvider"]["x"], 1,
        "main-resource writes leave status alone"
    );
    let w = api
        .patch(
            "g",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"colour": "green"}}})),
        )
        .await
        .expect("spec");
    assert_eq!(w.metadata.generation, Some(2));
    // Schema errors come back as 422 with causes.
    match api
        .patch(
            "g",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"colour": "pink"}}})),
        )
        .await
    {
        Err(kube::Error::Api(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
            assert!(
                e.message
                    .starts_with("Widget.example.crossplane.io \"g\" is invalid: "),
                "{}",
                e.message
            );
            assert!(
                e.message
                    .contains("spec.forProvider.colour: Unsupported value: \"pink\""),
                "{}",
                e.message
            );
        }
        other => panic!("expected 422, got {other:?}"),
    }
    // Unknown fields: Strict rejects with 400, the default (Warn) prunes.
    let strict = PatchParams {
        field_validation: Some(kube::api::ValidationDirective::Strict),
        ..Default::default()
    };
    match api
        .patch(
            "g",
            &strict,
            &Patch::Merge(json!({"spec": {"forProvider": {"bogus": 1}}})),
        )
        .await
    {
        Err(kube::Error::Api(e)) => assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "strict decoding error: unknown field \"spec.forProvider.bogus\""
            )
        ),
        other => panic!("expected 400, got {other:?}"),
    }
    let w = api
        .patch(
            "g",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"bogus": 1}}})),
        )
        .await
        .expect("pruned");
    assert!(w.data["spec"]["forProvider"].get("bogus").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_reference_garbage_collection() {
    let server = server().await;
    let client = admin(&server).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let dependent = |name: &str, owner: &ConfigMap| -> Secret {
        serde_json::from_value(json!({
            "metadata": {"name": name, "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.name_any(), "uid": owner.uid().expect("uid"), "blockOwnerDeletion": true}]},
            "stringData": {"password": "s3cr3t"},
        }))
        .expect("secret")
    };
    // Background (the default).
    let owner = cms
        .create(&PostParams::default(), &cm("owner", &[]))
        .await
        .expect("owner");
    let s = secrets
        .create(&PostParams::default(), &dependent("dep", &owner))
        .await
        .expect("dependent");
    assert_eq!(
        s.data.expect("data")["password"].0,
        b"s3cr3t",
        "stringData folded into data"
    );
    cms.delete("owner", &DeleteParams::default())
        .await
        .expect("delete owner");
    eventually("dependent collected", || {
        let secrets = secrets.clone();
        async move { secrets.get_opt("dep").await.ok()?.is_none().then_some(()) }
    })
    .await;

    // Orphan: dependents stay, without the owner reference.
    let owner = cms
        .create(&PostParams::default(), &cm("owner2", &[]))
        .await
        .expect("owner");
    secrets
        .create(&PostParams::default(), &dependent("dep2", &owner))
        .await
        .expect("dependent");
    cms.delete("owner2", &DeleteParams::orphan())
        .await
        .expect("delete owner");
    eventually("owner gone", || {
        let cms = cms.clone();
        async move { cms.get_opt("owner2").await.ok()?.is_none().then_some(()) }
    })
    .await;
    let s = secrets.get("dep2").await.expect("orphan survives");
    assert!(s.owner_references().is_empty());

    // Foreground: the owner waits for its dependents.
    let owner = cms
        .create(&PostParams::default(), &cm("owner3", &[]))
        .await
        .expect("owner");
    let mut held = dependent("dep3", &owner);
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    secrets
        .create(&PostParams::default(), &held)
        .await
        .expect("dependent");
    cms.delete("owner3", &DeleteParams::foreground())
        .await
        .expect("delete owner");
    eventually("dependent deleting", || {
        let secrets = secrets.clone();
        async move {
            secrets
                .get("dep3")
                .await
                .ok()?
                .metadata
                .deletion_timestamp
                .map(|_| ())
        }
    })
    .await;
    let o = cms.get("owner3").await.expect("owner waits for dependents");
    assert!(o.finalizers().contains(&"foregroundDeletion".to_string()));
    secrets
        .patch(
            "dep3",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release");
    eventually("owner gone after dependents", || {
        let cms = cms.clone();
        async move { cms.get_opt("owner3").await.ok()?.is_none().then_some(()) }
    })
    .await;

    // An owner reference to an object that does not exist is collected too.
    let ghost: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000001"}}),
    )
    .expect("cm");
    secrets
        .create(&PostParams::default(), &dependent("dangling", &ghost))
        .await
        .expect("dependent");
    eventually("dangling dependent collected", || {
        let secrets = secrets.clone();
        async move {
            secrets
                .get_opt("dangling")
                .await
                .ok()?
                .is_none()
                .then_some(())
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_and_field_selectors_and_deletecollection() {
    let server = server().await;
    let client = admin(&server).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.create(
        &PostParams::default(),
        &cm("a", &[("tier", "web"), ("env", "prod")]),
    )
    .await
    .expect("a");
    api.create(&PostParams::default(), &cm("b", &[("tier", "db")]))
        .await
        .expect("b");
    api.create(&PostParams::default(), &cm("c", &[]))
        .await
        .expect("c");
    let names = |sel: &'static str| {
        let api = api.clone();
        async move {
            let mut n: Vec<String> = api
                .list(&ListParams::default().labels(sel))
                .await
                .expect("list")
                .items
                .iter()
                .map(|c| c.name_any())
                .collect();
            n.retain(|n| n.len() == 1);
            n
        }
    };
    assert_eq!(names("tier=web").await, ["a"]);
    assert_eq!(names("tier!=web").await, ["b", "c"]);
    assert_eq!(names("tier in (web,db)").await, ["a", "b"]);
    assert_eq!(names("tier notin (web)").await, ["b", "c"]);
    assert_eq!(names("tier").await, ["a", "b"]);
    assert_eq!(names("!tier").await, ["c"]);
    assert_eq!(names("tier,env=prod").await, ["a"]);
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .expect("list");
    assert_eq!(by_name.items.len(), 1);
    match api.list(&ListParams::default().fields("data.k=v")).await {
        Err(kube::Error::Api(e)) => assert_eq!(
            (e.code, e.message.as_str()),
            (400, "field label not supported: data.k")
        ),
        other => panic!("expected 400, got {other:?}"),
    }
    let all: Api<ConfigMap> = Api::all(client.clone());
    let across = all
        .list(&ListParams::default().fields("metadata.namespace=default,metadata.name=a"))
        .await
        .expect("list");
    assert_eq!(across.items.len(), 1);
    api.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("tier"),
    )
    .await
    .expect("deletecollection");
    assert_eq!(names("").await, ["c"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_one_store_with_two_views() {
    let server = server().await;
    let client = admin(&server).await;
    let v1: Api<EventV1> = Api::namespaced(client.clone(), "default");
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let ev: EventV1 = serde_json::from_value(json!({
        "metadata": {"name": "e1"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "ctrl",
        "reportingInstance": "ctrl-1",
        "action": "Reconcile",
        "reason": "Synced",
        "note": "all good",
        "type": "Normal",
        "regarding": {"kind": "Widget", "name": "w", "namespace": "default", "uid": "u-1", "apiVersion": "example.crossplane.io/v1alpha1"},
        "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
    }))
    .expect("event");
    v1.create(&PostParams::default(), &ev)
        .await
        .expect("created via events.k8s.io");
    let fs = "involvedObject.name=w,involvedObject.namespace=default,involvedObject.uid=u-1,involvedObject.kind=Widget";
    let found = core
        .list(&ListParams::default().fields(fs))
        .await
        .expect("core list");
    assert_eq!(found.items.len(), 1);
    let e = &found.items[0];
    assert_eq!(e.message.as_deref(), Some("all good"));
    assert_eq!(e.reporting_component.as_deref(), Some("ctrl"));
    assert_eq!(e.series.as_ref().and_then(|s| s.count), Some(2));
    let none = core
        .list(&ListParams::default().fields("involvedObject.name=other"))
        .await
        .expect("list");
    assert!(none.items.is_empty());
    let by_regarding = v1
        .list(&ListParams::default().fields("regarding.name=w"))
        .await
        .expect("v1 list");
    assert_eq!(by_regarding.items.len(), 1);
    // Missing required fields of events.k8s.io are 422.
    let bad: EventV1 = serde_json::from_value(json!({"metadata": {"name": "e2"}, "eventTime": "2024-01-01T00:00:00.000000Z", "reason": "X", "type": "Normal"})).expect("event");
    match v1.create(&PostParams::default(), &bad).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 422);
            assert!(
                e.message.contains("reportingController: Required value"),
                "{}",
                e.message
            );
        }
        other => panic!("expected 422, got {other:?}"),
    }
    let deprecated: EventV1 = serde_json::from_value(json!({
        "metadata": {"name": "e3"}, "eventTime": "2024-01-01T00:00:00.000000Z", "reason": "X", "type": "Normal",
        "action": "A", "reportingController": "c", "reportingInstance": "c-1", "deprecatedCount": 3,
    }))
    .expect("event");
    match v1.create(&PostParams::default(), &deprecated).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 422);
            assert!(
                e.message
                    .contains("deprecatedCount: Invalid value: \"\": needs to be unset"),
                "{}",
                e.message
            );
        }
        other => panic!("expected 422, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_and_their_contents() {
    let server = server().await;
    let client = admin(&server).await;
    let nss: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = nss
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|n| n.name_any())
        .collect();
    for ns in ["default", "kube-system", "crossplane-system"] {
        assert!(names.contains(&ns.to_string()), "{ns} exists at start");
    }
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "tmp"}})).expect("ns");
    nss.create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "tmp");
    cms.create(&PostParams::default(), &cm("x", &[]))
        .await
        .expect("create in tmp");
    let missing: Api<ConfigMap> = Api::namespaced(client.clone(), "nowhere");
    match missing.create(&PostParams::default(), &cm("x", &[])).await {
        Err(kube::Error::Api(e)) => assert_eq!(
            (e.code, e.message.as_str()),
            (404, "namespaces \"nowhere\" not found")
        ),
        other => panic!("expected 404, got {other:?}"),
    }
    nss.delete("tmp", &DeleteParams::default())
        .await
        .expect("delete ns");
    eventually("namespace gone", || {
        let nss = nss.clone();
        async move { nss.get_opt("tmp").await.ok()?.is_none().then_some(()) }
    })
    .await;
    assert!(
        cms.get_opt("x").await.expect("get").is_none(),
        "contents deleted"
    );
    match nss.delete("default", &DeleteParams::default()).await {
        Err(kube::Error::Api(e)) => assert_eq!(e.code, 403),
        other => panic!("expected 403, got {other:?}"),
    }
}

async fn raw(client: &Client, path: &str, accept: &str) -> serde_json::Value {
    let req = http::Request::get(path)
        .header("Accept", accept)
        .body(Vec::new())
        .expect("request");
    client
        .request::<serde_json::Value>(req)
        .await
        .expect("response")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_and_tables() {
    let server = server().await;
    let client = admin(&server).await;
    install_widget_crd(&client).await;
    let api = widgets(&client, "default");
    api.create(&PostParams::default(), &widget("t", "red"))
        .await
        .expect("create");
    let discovery = kube::Discovery::new(client.clone())
        .run()
        .await
        .expect("discovery");
    let (ar, caps) = discovery
        .resolve_gvk(&kube::core::GroupVersionKind::gvk(
            "example.crossplane.io",
            "v1alpha1",
            "Widget",
        ))
        .expect("widget discovered");
    assert_eq!(ar.plural, "widgets");
    assert!(
        caps.subresources
            .iter()
            .any(|(s, _)| s.plural == "widgets/status" || s.plural == "status"),
        "{:?}",
        caps.subresources
    );
    assert!(
        discovery
            .resolve_gvk(&kube::core::GroupVersionKind::gvk(
                "coordination.k8s.io",
                "v1",
                "Lease"
            ))
            .is_some()
    );
    let t = raw(
        &client,
        "/apis/example.crossplane.io/v1alpha1/namespaces/default/widgets",
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    )
    .await;
    assert_eq!(t["kind"], "Table");
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(cols, ["Name", "SYNCED", "READY", "EXTERNAL-NAME", "AGE"]);
    assert_eq!(t["rows"][0]["cells"][0], "t");
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    let t = raw(
        &client,
        "/api/v1/namespaces/default/secrets",
        "application/json;as=Table;v=v1;g=meta.k8s.io",
    )
    .await;
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(cols, ["Name", "Type", "Data", "Age"]);
    let v = raw(&client, "/version", "application/json").await;
    assert_eq!(v["major"], "1");
    // `kubectl get -w` watches with the Table Accept header: events carry one-row Tables.
    let req = http::Request::get("/apis/example.crossplane.io/v1alpha1/namespaces/default/widgets?watch=true&timeoutSeconds=5")
        .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
        .body(Vec::new())
        .expect("request");
    let mut events = client
        .request_events::<serde_json::Value>(req)
        .await
        .expect("watch")
        .boxed();
    match events.next().await.expect("an event").expect("decoded") {
        WatchEvent::Added(t) => {
            assert_eq!(t["kind"], "Table");
            assert_eq!(t["rows"][0]["cells"][0], "t");
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
    // sendInitialEvents without resourceVersionMatch=NotOlderThan is invalid, as upstream.
    let req = http::Request::get("/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true")
        .body(Vec::new())
        .expect("request");
    match client.request::<serde_json::Value>(req).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 422);
            assert!(
                e.message.contains(
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                ),
                "{}",
                e.message
            );
        }
        other => panic!("expected 422, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_service_account_rbac() {
    let server = server().await;
    let admin_client = admin(&server).await;
    install_widget_crd(&admin_client).await;
    // The permissions Crossplane grants a provider (docs/managed-reconciler.md §15.4).
    let role: k8s_openapi::api::rbac::v1::ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "crossplane:provider:example:system"},
        "rules": [
            {"apiGroups": ["example.crossplane.io"], "resources": ["*", "*/status"], "verbs": ["get", "list", "watch", "update", "patch", "create"]},
            {"apiGroups": ["example.crossplane.io"], "resources": ["*/finalizers"], "verbs": ["update"]},
            {"apiGroups": [""], "resources": ["secrets", "configmaps", "events"], "verbs": ["*"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]},
        ],
    }))
    .expect("role");
    Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(admin_client.clone())
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    let binding: k8s_openapi::api::rbac::v1::ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "crossplane:provider:example:system"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "crossplane:provider:example:system"},
        "subjects": [{"kind": "ServiceAccount", "name": "provider-example", "namespace": "crossplane-system"}],
    }))
    .expect("binding");
    Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(admin_client.clone())
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    let token = server.issue_token(
        "system:serviceaccount:crossplane-system:provider-example",
        &[],
    );
    let client = client_for(&server, &token).await;
    let api = widgets(&client, "default");
    api.create(&PostParams::default(), &widget("p", "red"))
        .await
        .expect("create allowed");
    api.patch_status("p", &PatchParams::apply("provider").force(), &Patch::Apply(json!({"apiVersion": "example.crossplane.io/v1alpha1", "kind": "Widget", "status": {"atProvider": {"id": "1"}}}))).await.expect("status allowed");
    match api.delete("p", &DeleteParams::default()).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 403);
            assert_eq!(
                e.message,
                "widgets.example.crossplane.io \"p\" is forbidden: User \"system:serviceaccount:crossplane-system:provider-example\" cannot delete resource \"widgets\" in API group \"example.crossplane.io\" in the namespace \"default\""
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
    let events: Api<EventV1> = Api::namespaced(client.clone(), "default");
    match events.list(&ListParams::default()).await {
        Err(kube::Error::Api(e)) => assert_eq!(e.code, 403, "nothing on events.k8s.io"),
        other => panic!("expected 403, got {other:?}"),
    }
    let crds = crds(&client);
    assert!(
        matches!(crds.list(&ListParams::default()).await, Err(kube::Error::Api(e)) if e.code == 403)
    );
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "crossplane-system");
    secrets
        .list(&ListParams::default())
        .await
        .expect("secrets allowed");
    // A connection secret owned by the managed resource, with blockOwnerDeletion: allowed,
    // because the provider may update widgets/finalizers.
    let owner = api.get("p").await.expect("get");
    let owned = |name: &str| -> Secret {
        serde_json::from_value(json!({
            "metadata": {"name": name, "ownerReferences": [{"apiVersion": "example.crossplane.io/v1alpha1", "kind": "Widget", "name": "p", "uid": owner.uid().expect("uid"), "controller": true, "blockOwnerDeletion": true}]},
            "stringData": {"k": "v"},
        }))
        .expect("secret")
    };
    let default_secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    default_secrets
        .create(&PostParams::default(), &owned("conn"))
        .await
        .expect("owned secret allowed");
    // Somebody without finalizers rights on widgets may not block the owner's deletion.
    let rb: k8s_openapi::api::rbac::v1::RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "other-secrets", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "secrets-only"},
        "subjects": [{"kind": "User", "name": "other"}],
    }))
    .expect("rb");
    let cr: k8s_openapi::api::rbac::v1::ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "secrets-only"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}],
    }))
    .expect("cr");
    Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(admin_client.clone())
        .create(&PostParams::default(), &cr)
        .await
        .expect("cr");
    Api::<k8s_openapi::api::rbac::v1::RoleBinding>::namespaced(admin_client.clone(), "default")
        .create(&PostParams::default(), &rb)
        .await
        .expect("rb");
    let other = client_for(&server, &server.issue_token("other", &[])).await;
    match Api::<Secret>::namespaced(other, "default")
        .create(&PostParams::default(), &owned("conn2"))
        .await
    {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 403);
            assert!(e.message.contains("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: User \"other\" cannot update resource \"widgets/finalizers\""), "{}", e.message);
        }
        other => panic!("expected 403, got {other:?}"),
    }
    // Creating an object with owner references needs no delete right (the admission plugin
    // exempts creates: whoever creates could have not created it), so a provider may create a
    // usage record owned by its managed resource; changing them later does need delete.
    let mut child = widget("child", "blue");
    child.metadata.owner_references = Some(vec![
        serde_json::from_value(json!({"apiVersion": "example.crossplane.io/v1alpha1", "kind": "Widget", "name": "p", "uid": owner.uid().expect("uid"), "blockOwnerDeletion": true}))
            .expect("owner ref"),
    ]);
    api.create(&PostParams::default(), &child)
        .await
        .expect("create with owner references allowed without delete");
    match api
        .patch(
            "child",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"ownerReferences": null}})),
        )
        .await
    {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 403);
            assert!(
                e.message
                    .contains("cannot set an ownerRef on a resource you can't delete"),
                "{}",
                e.message
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_expire_and_watches_time_out_and_tokens_are_required() {
    let server = kube_testserver::TestServer::start(kube_testserver::Config {
        event_ttl: Duration::from_secs(2),
        ..Default::default()
    })
    .await
    .expect("server");
    let client = admin(&server).await;
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let ev: CoreEvent = serde_json::from_value(json!({
        "metadata": {"name": "short-lived"},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "reason": "Test", "message": "m", "type": "Normal", "count": 1,
        "firstTimestamp": now, "lastTimestamp": now,
    }))
    .expect("event");
    core.create(&PostParams::default(), &ev)
        .await
        .expect("event");
    eventually("event expired", || {
        let core = core.clone();
        async move {
            core.get_opt("short-lived")
                .await
                .ok()?
                .is_none()
                .then_some(())
        }
    })
    .await;

    // timeoutSeconds ends the watch.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let started = tokio::time::Instant::now();
    let mut s = cms
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .expect("watch")
        .boxed();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(60), s.next())
        .await
        .expect("the watch ends")
    {
        ev.expect("event");
    }
    assert!(started.elapsed() >= Duration::from_millis(900));

    // Dry-run delete leaves the object.
    cms.create(&PostParams::default(), &cm("keep", &[]))
        .await
        .expect("create");
    cms.delete(
        "keep",
        &DeleteParams {
            dry_run: true,
            ..Default::default()
        },
    )
    .await
    .expect("dry-run delete");
    assert!(cms.get_opt("keep").await.expect("get").is_some());

    // Wrong token: 401 with a Status body.
    let bad = client_for(&server, "wrong").await;
    match Api::<ConfigMap>::namespaced(bad, "default")
        .list(&ListParams::default())
        .await
    {
        Err(kube::Error::Api(e)) => assert_eq!((e.code, e.reason.as_str()), (401, "Unauthorized")),
        other => panic!("expected 401, got {other:?}"),
    }
}

/// A plain HTTP/1.1 GET (status, lower-cased headers, body), for what kube-rs does not show.
async fn http_get(
    server: &kube_testserver::TestServer,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, BTreeMap<String, String>, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let mut req = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n",
        server.addr(),
        server.admin_token()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    conn.write_all(req.as_bytes()).await.expect("request sent");
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).await.expect("response read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, raw[split + 4..].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_v2_is_served_as_json_and_protobuf_with_an_etag() {
    let server = server().await;
    let client = admin(&server).await;
    install_widget_crd(&client).await;

    let (status, h, body) =
        http_get(&server, "/openapi/v2", &[("Accept", "application/json")]).await;
    assert_eq!(status, 200);
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(h["vary"], "Accept");
    let etag = h["etag"].clone();
    assert!(
        etag.len() == 130 && etag.starts_with('"') && etag.ends_with('"'),
        "quoted SHA-512: {etag}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(doc["info"]["title"], "Kubernetes");
    assert_eq!(doc["info"]["version"], kube_testserver::VERSION);
    let widget = &doc["definitions"]["io.crossplane.example.v1alpha1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "example.crossplane.io", "kind": "Widget", "version": "v1alpha1"}])
    );
    let for_provider = &widget["properties"]["spec"]["properties"]["forProvider"];
    assert_eq!(for_provider["required"], json!(["colour"]));
    assert_eq!(
        for_provider["properties"]["colour"]["enum"],
        json!(["red", "green", "blue"])
    );
    assert!(
        for_provider["properties"]["mode"].get("default").is_none(),
        "defaults are pruned from v2"
    );
    assert!(
        doc["paths"]["/apis/example.crossplane.io/v1alpha1/namespaces/{namespace}/widgets/{name}"]
            ["patch"]["parameters"]
            .as_array()
            .expect("patch parameters")
            .iter()
            .any(|p| p["name"] == "fieldValidation")
    );

    // What client-go's OpenAPISchema() asks for: protobuf, same ETag.
    let (status, h, pb) = http_get(
        &server,
        "/openapi/v2",
        &[(
            "Accept",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        )],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        h["content-type"],
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );
    assert_eq!(h["etag"], etag);
    // Document.swagger (field 1) = "2.0".
    assert_eq!(&pb[..5], b"\x0a\x032.0");
    let needle = b"io.crossplane.example.v1alpha1.Widget";
    assert!(pb.windows(needle.len()).any(|w| w == needle));

    // A cached copy is revalidated; an unknown type is 406.
    let (status, h, body) = http_get(
        &server,
        "/openapi/v2",
        &[("Accept", "application/json"), ("If-None-Match", &etag)],
    )
    .await;
    assert_eq!((status, body.len()), (304, 0));
    assert_eq!(h["etag"], etag);
    let (status, _, _) = http_get(&server, "/openapi/v2", &[("Accept", "text/html")]).await;
    assert_eq!(status, 406);

    // A new CRD changes the document and its ETag.
    let crd: serde_json::Value = serde_yaml::from_str(
        &WIDGET_CRD
            .replace("widgets.example", "gadgets.example")
            .replace("Widget", "Gadget")
            .replace("widget", "gadget"),
    )
    .expect("CRD");
    let crd = serde_json::from_value(crd).expect("CRD");
    crds(&client)
        .create(&PostParams::default(), &crd)
        .await
        .expect("CRD created");
    let (status, h, body) = http_get(
        &server,
        "/openapi/v2",
        &[("Accept", "application/json"), ("If-None-Match", &etag)],
    )
    .await;
    assert_eq!(status, 200);
    assert_ne!(h["etag"], etag);
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    assert!(doc["definitions"]["io.crossplane.example.v1alpha1.GadgetList"].is_object());
}

/// Authorization decisions are remembered, but every change to a role or binding is seen by
/// the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_changes_apply_to_the_next_request() {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    let server = server().await;
    let admin_client = admin(&server).await;
    let roles = Api::<ClusterRole>::all(admin_client.clone());
    let bindings = Api::<ClusterRoleBinding>::all(admin_client.clone());
    let role = |resource: &str| -> ClusterRole {
        serde_json::from_value(json!({
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": [resource], "verbs": ["list"]}],
        }))
        .expect("role")
    };
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
        "subjects": [{"kind": "User", "name": "u"}],
    }))
    .expect("binding");
    roles
        .create(&PostParams::default(), &role("configmaps"))
        .await
        .expect("role");
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    let client = client_for(&server, &server.issue_token("u", &[])).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
    let allowed = || async { configmaps.list(&ListParams::default()).await.is_ok() };
    assert!(allowed().await);
    assert!(allowed().await, "remembered");
    bindings
        .delete("reader", &DeleteParams::default())
        .await
        .expect("delete binding");
    assert!(!allowed().await, "the binding is gone");
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding again");
    assert!(allowed().await, "bound again");
    roles
        .replace("reader", &PostParams::default(), &role("secrets"))
        .await
        .expect("replace role");
    assert!(!allowed().await, "the role no longer grants configmaps");
}
