//! Ad-hoc performance run (not a test): 600 CRDs, 10,000 custom resources, one watch per Kind.
//!
//! `cargo run -p kube-testserver --example perf [--release]` (builds and spawns the `serve`
//! example as the server process so its memory can be read from /proc). Prints timings and the
//! server's resident memory.

use futures::StreamExt;
use kube::api::{Api, DynamicObject, PostParams, WatchEvent, WatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const CRDS: usize = 600;
const OBJECTS: usize = 10_000;

fn crd(i: usize) -> serde_json::Value {
    let group = format!("g{}.perf.crossplane.io", i / 30);
    let kind = format!("Kind{i}");
    let plural = format!("kind{i}s");
    let yaml = include_str!("../tests/fixtures/widget-crd.yaml")
        .replace(
            "widgets.example.crossplane.io",
            &format!("{plural}.{group}"),
        )
        .replace("example.crossplane.io", &group)
        .replace("WidgetList", &format!("{kind}List"))
        .replace("Widget", &kind)
        .replace("widgets", &plural)
        .replace("widget", &kind.to_lowercase());
    serde_yaml::from_str(&yaml).expect("crd yaml")
}

fn resource(i: usize) -> ApiResource {
    let gvk = GroupVersionKind::gvk(
        &format!("g{}.perf.crossplane.io", i / 30),
        "v1alpha1",
        &format!("Kind{i}"),
    );
    ApiResource::from_gvk_with_plural(&gvk, &format!("kind{i}s"))
}

fn rss(pid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let get = |k: &str| {
        s.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (get("VmRSS:") / 1024, get("VmHWM:") / 1024)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("kube-testserver-perf-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let serve = std::env::current_exe()?.with_file_name("serve");
    let mut child = tokio::process::Command::new(&serve)
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().unwrap_or(0);
    let kc_path = dir.join("kubeconfig");
    while !kc_path.exists() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let kc = kube::config::Kubeconfig::read_from(&kc_path)?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = kube::Client::try_from(cfg)?;
    println!(
        "server pid {pid}, memory at start: {:?} MiB (rss, peak)",
        rss(pid)
    );

    let t = Instant::now();
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    futures::stream::iter(0..CRDS)
        .for_each_concurrent(8, |i| {
            let crds = crds.clone();
            async move {
                let obj: DynamicObject = serde_json::from_value(crd(i)).expect("crd");
                crds.create(&PostParams::default(), &obj)
                    .await
                    .expect("crd created");
            }
        })
        .await;
    let crd_time = t.elapsed();
    println!(
        "{CRDS} CRDs created and established in {crd_time:?}; memory {:?} MiB",
        rss(pid)
    );

    let seen = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    for i in 0..CRDS {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource(i));
        let seen = seen.clone();
        let mut stream = api
            .watch(&WatchParams::default().timeout(600), "0")
            .await?
            .boxed();
        tokio::spawn(async move {
            while let Some(Ok(ev)) = stream.next().await {
                if matches!(ev, WatchEvent::Added(_)) {
                    seen.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    println!("{CRDS} watches open in {:?}", t.elapsed());

    let t = Instant::now();
    futures::stream::iter(0..OBJECTS)
        .for_each_concurrent(16, |n| {
            let client = client.clone();
            async move {
                let i = n % CRDS;
                let ar = resource(i);
                let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
                let obj: DynamicObject = serde_json::from_value(serde_json::json!({
                    "apiVersion": ar.api_version, "kind": ar.kind,
                    "metadata": {"name": format!("obj-{n}"), "annotations": {"crossplane.io/external-name": format!("ext-{n}")}},
                    "spec": {"forProvider": {"colour": "red", "description": "perf", "size": 3}},
                }))
                .expect("object");
                api.create(&PostParams::default(), &obj).await.expect("object created");
            }
        })
        .await;
    let create_time = t.elapsed();
    while seen.load(Ordering::Relaxed) < OBJECTS {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let watch_time = t.elapsed();
    println!(
        "{OBJECTS} objects created in {create_time:?} ({:.0}/s, 16 concurrent clients); all {OBJECTS} ADDED events delivered after {watch_time:?}",
        OBJECTS as f64 / create_time.as_secs_f64()
    );
    let t = Instant::now();
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &resource(0));
    let list = all.list(&Default::default()).await?;
    println!(
        "list of one Kind ({} objects) in {:?}",
        list.items.len(),
        t.elapsed()
    );
    let t = Instant::now();
    let crd_list = crds.list(&Default::default()).await?;
    println!(
        "list of all {} CRDs in {:?}",
        crd_list.items.len(),
        t.elapsed()
    );
    let t = Instant::now();
    let _ = kube::Discovery::new(client.clone()).run().await?;
    println!("full discovery in {:?}", t.elapsed());
    println!("server memory at end: {:?} MiB (rss, peak)", rss(pid));
    child.kill().await?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
