//! Files on the provider's own filesystem, where upstream reads a local path (a
//! certificate's `file`, an artifact's `file_path`): Terraform reads them on the machine it
//! runs on; here that is the provider's pod, into which a DeploymentRuntimeConfig mounts
//! them (a Secret or ConfigMap volume, a persistent volume).

use jfrog_client::{Error, Method, RequestContext, Service};

/// The bytes of the file at `path`. `named` says which field gave the path in the error
/// (the path itself is shown only when `show_path`: a Secret's value never is).
pub async fn read(
    path: &str,
    named: &str,
    show_path: bool,
    service: Service,
    route: &str,
) -> Result<Vec<u8>, Error> {
    tokio::fs::read(path).await.map_err(|e| {
        let which = if show_path {
            format!("{named} {path:?}")
        } else {
            format!("the file named by {named}")
        };
        Error::InvalidRequest {
            ctx: RequestContext {
                service,
                method: Method::GET,
                route: route.to_string(),
            },
            message: format!(
                "{which} cannot be read on the provider's filesystem ({}): mount it into the provider's pod (a DeploymentRuntimeConfig volume) or give the content inline",
                e.kind()
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_a_file_and_names_a_missing_one_without_a_secret_path() {
        let dir = std::env::temp_dir().join(format!("local-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let f = dir.join("a.pem");
        std::fs::write(&f, b"pem").expect("write");
        let p = f.to_str().expect("utf-8");
        assert_eq!(
            read(p, "filePath", true, Service::Artifactory, "/x")
                .await
                .expect("read"),
            b"pem"
        );
        let missing = dir.join("missing").to_str().expect("utf-8").to_string();
        let e = read(&missing, "fileSecretRef", false, Service::Artifactory, "/x")
            .await
            .expect_err("missing")
            .to_string();
        assert!(e.contains("the file named by fileSecretRef"), "{e}");
        assert!(
            !e.contains(&missing),
            "a Secret's value is never shown: {e}"
        );
        let e = read(&missing, "filePath", true, Service::Artifactory, "/x")
            .await
            .expect_err("missing")
            .to_string();
        assert!(
            e.contains(&missing) && e.contains("DeploymentRuntimeConfig"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
