//! Service-account tokens as kube-apiserver issues them: signed JWTs from the TokenRequest API
//! (`POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`, RBAC verb `create` on
//! `serviceaccounts/token`) and the public OIDC discovery that lets a relying party (the JFrog
//! platform's OIDC integration) verify them: `/.well-known/openid-configuration` and
//! `/openid/v1/jwks`.
//!
//! The issuer is the server's own URL (`https://127.0.0.1:PORT`, what `--service-account-issuer`
//! would be set to), the key a P-256 key made at start (ES256; kube-apiserver accepts RSA and
//! ECDSA signing keys). Claims: `iss`, `sub` (`system:serviceaccount:<ns>:<name>`), `aud` (the
//! requested audiences, else the issuer), `exp`, `iat`, `nbf`, `jti` and `kubernetes.io`
//! (`namespace`, `serviceaccount.name`/`uid`), as upstream. `expirationSeconds` defaults to
//! one hour and must be at least 600 (upstream's minimum).
//!
//! Deviations: discovery is served to unauthenticated clients (as clusters that bind
//! `system:service-account-issuer-discovery` to `system:unauthenticated`, which a relying party
//! outside the cluster needs); the issued tokens are not accepted as credentials by this
//! server (its clients use [`crate::TestServer::issue_token`]); `boundObjectRef` is ignored.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

use crate::status::ApiError;

/// Default and minimum `expirationSeconds`.
const DEFAULT_EXPIRATION: i64 = 3600;
const MIN_EXPIRATION: i64 = 600;

/// The signing key of the service-account tokens.
pub(crate) struct Signer {
    key: EcdsaKeyPair,
    rng: SystemRandom,
    kid: String,
}

impl Signer {
    /// A fresh key.
    pub(crate) fn generate() -> Signer {
        let rng = SystemRandom::new();
        // Generation from the system RNG only fails when the OS has no randomness.
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("the system random generator works");
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("a generated key parses");
        let digest = ring::digest::digest(&ring::digest::SHA256, key.public_key().as_ref());
        let kid = URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16]);
        Signer { key, rng, kid }
    }

    /// The JWKS document.
    pub(crate) fn jwks(&self) -> Value {
        let point = self.key.public_key().as_ref();
        // Uncompressed point: 0x04 || x (32 bytes) || y (32 bytes).
        let (x, y) = point[1..].split_at(32);
        json!({"keys": [{
            "use": "sig", "kty": "EC", "crv": "P-256", "alg": "ES256", "kid": self.kid,
            "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
        }]})
    }

    fn sign(&self, claims: &Value) -> Result<String, ApiError> {
        let header = json!({"alg": "ES256", "kid": self.kid});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = self
            .key
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| ApiError::internal("cannot sign the service-account token"))?;
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref())))
    }
}

/// The discovery document of `issuer`.
pub(crate) fn discovery(issuer: &str) -> Value {
    json!({
        "issuer": issuer,
        "jwks_uri": format!("{issuer}/openid/v1/jwks"),
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
    })
}

/// Answers a TokenRequest for the ServiceAccount `sa` (its stored object) with a signed token.
pub(crate) fn token_request(
    signer: &Signer,
    issuer: &str,
    sa: &Value,
    body: &Value,
) -> Result<Value, ApiError> {
    let ns = sa["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = sa["metadata"]["name"].as_str().unwrap_or_default();
    let uid = sa["metadata"]["uid"].as_str().unwrap_or_default();
    let expiration = match body.pointer("/spec/expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("spec.expirationSeconds must be an integer"))?,
    };
    if expiration < MIN_EXPIRATION {
        return Err(ApiError::new(
            422,
            "Invalid",
            format!(
                "TokenRequest.authentication.k8s.io \"{name}\" is invalid: spec.expirationSeconds: Invalid value: {expiration}: may not specify a duration less than 10 minutes"
            ),
        ));
    }
    let audiences: Vec<String> = body
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .filter(|a: &Vec<String>| !a.is_empty())
        .unwrap_or_else(|| vec![issuer.to_owned()]);
    let now = chrono::Utc::now();
    let exp = now.timestamp() + expiration;
    let claims = json!({
        "aud": audiences,
        "exp": exp,
        "iat": now.timestamp(),
        "iss": issuer,
        "jti": uuid::Uuid::new_v4().to_string(),
        "kubernetes.io": {"namespace": ns, "serviceaccount": {"name": name, "uid": uid}},
        "nbf": now.timestamp(),
        "sub": format!("system:serviceaccount:{ns}:{name}"),
    });
    let token = signer.sign(&claims)?;
    let expires = chrono::DateTime::from_timestamp(exp, 0)
        .unwrap_or(now)
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": null},
        "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": null},
        "status": {"token": token, "expirationTimestamp": expires},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_verify_against_the_jwks() {
        let signer = Signer::generate();
        let sa = json!({"metadata": {"namespace": "ns", "name": "sa", "uid": "u1"}});
        let answer = token_request(
            &signer,
            "https://127.0.0.1:1",
            &sa,
            &json!({"spec": {"audiences": ["jfrog-generic"]}}),
        )
        .unwrap();
        let token = answer["status"]["token"].as_str().unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["sub"], "system:serviceaccount:ns:sa");
        assert_eq!(claims["aud"], json!(["jfrog-generic"]));
        let jwk = &signer.jwks()["keys"][0];
        let mut point = vec![4u8];
        point.extend(URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap());
        let key = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            point,
        );
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        let short = token_request(
            &signer,
            "https://x",
            &sa,
            &json!({"spec": {"expirationSeconds": 60}}),
        );
        assert!(short.is_err());
    }
}
