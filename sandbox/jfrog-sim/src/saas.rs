//! SaaS mode: the simulator answers as a JFrog Cloud (SaaS) platform does where that differs
//! from a self-hosted one. JFrog Cloud blocks the calls that reach the server's own
//! configuration; the answers are JFrog Cloud's, as users quoted them:
//!
//! - `/artifactory/api/system/configuration` (the configuration descriptor: `GET` XML, `POST`
//!   XML, `PATCH` YAML, and the calls below it such as `.../webServer`): 400 "Artifactory
//!   Online does not support accessing this API endpoint, please contact support@jfrog.com
//!   for further assistance if required." (jfrog/terraform-provider-artifactory issues #452
//!   and #550, jfrog/terraform-provider-project issue #221: every Terraform resource on that
//!   endpoint is documented "blocked/removed in SaaS environments").
//! - `/artifactory/api/system/license` and `/artifactory/api/system/licenses`: 400
//!   "Artifactory Online does not require license, Please contact support@jfrog.com for
//!   further assistance if required." (jfrog/terraform-provider-artifactory pull request
//!   #95; the platform provider's `platform_license` is "Only available for self-hosted
//!   instances").
//!
//! Both in Artifactory's error body. Everything else answers as on a self-hosted platform.

use axum::http::StatusCode;

use crate::errors::{ApiError, Flavor};

const NO_ENDPOINT: &str = "Artifactory Online does not support accessing this API endpoint, please contact support@jfrog.com for further assistance if required.";
const NO_LICENSE: &str = "Artifactory Online does not require license, Please contact support@jfrog.com for further assistance if required.";

/// JFrog Cloud's answer to a self-hosted-only call, or `None` for a call Cloud serves.
pub(crate) fn refusal(path: &str) -> Option<ApiError> {
    let path = path.trim_end_matches('/');
    let under = |p: &str| path == p || path.starts_with(&format!("{p}/"));
    let msg = if under("/artifactory/api/system/configuration") {
        NO_ENDPOINT
    } else if under("/artifactory/api/system/license") || under("/artifactory/api/system/licenses")
    {
        NO_LICENSE
    } else {
        return None;
    };
    Some(ApiError::new(
        Flavor::Artifactory,
        StatusCode::BAD_REQUEST,
        msg,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_self_hosted_calls_are_refused() {
        for p in [
            "/artifactory/api/system/configuration",
            "/artifactory/api/system/configuration/",
            "/artifactory/api/system/configuration/webServer",
        ] {
            assert_eq!(
                refusal(p).map(|e| e.message).as_deref(),
                Some(NO_ENDPOINT),
                "{p}"
            );
        }
        for p in [
            "/artifactory/api/system/license",
            "/artifactory/api/system/licenses/",
        ] {
            assert_eq!(
                refusal(p).map(|e| e.message).as_deref(),
                Some(NO_LICENSE),
                "{p}"
            );
        }
        for p in [
            "/artifactory/api/system/ping",
            "/artifactory/api/system/configurations",
            "/artifactory/api/repositories/x",
        ] {
            assert!(refusal(p).is_none(), "{p}");
        }
    }
}
