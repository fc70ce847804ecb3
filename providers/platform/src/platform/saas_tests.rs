//! On JFrog Cloud the licence and the reverse proxy configuration do not exist (Cloud answers
//! 400 "Artifactory Online does not ..."): their MRs say, naming the Kind, that they need a
//! self-hosted platform, and nothing is written.

use std::sync::Arc;

use provider_family::ClientCache;
use provider_family_suite as suite;

use super::{examples, kinds, tables::KINDS};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_jfrog_cloud_the_self_hosted_settings_say_so() {
    let mut env = suite::start_with(
        crate::PROVIDER,
        kinds(),
        Arc::new(ClientCache::new(crate::PROVIDER)),
        jfrog_sim::SimConfig {
            saas: true,
            ..jfrog_sim::SimConfig::default()
        },
    )
    .await;
    env.create_objects(&[examples::secret()]).await;
    for kind in ["License", "ReverseProxy"] {
        let k = kinds()
            .iter()
            .find(|k| k.resolved().decl.kind == kind)
            .cloned()
            .expect("declared");
        let d = KINDS.iter().find(|d| d.kind == kind).expect("declared");
        env.add(&k, examples::example(d, false)).await;
    }
    env.sim.reset_counts();
    for m in &env.mrs {
        m.reconcile().await;
        let o = m.get().await;
        let (status, _, message) = testkit::condition(&o, "Synced").expect("Synced");
        assert_eq!(status, "False", "{}", m.name);
        let kind = &m.kind.resolved().decl.kind;
        assert!(
            message.contains(&format!("{kind} needs a self-hosted JFrog platform"))
                && message.contains("Artifactory Online"),
            "{message}"
        );
    }
    assert_eq!(
        suite::writes(&env.sim, &[]),
        0,
        "{:?}",
        env.sim.request_counts()
    );
}
