//! The Crossplane package as an OCI image layout (reference §15.7): one layer holding
//! `package.yaml` at its root, annotated `io.crossplane.xpkg: base` in the manifest and
//! recorded as the config label `io.crossplane.xpkg:sha256:<layer digest>=base` (the tarball
//! format loses layer annotations); optionally a layer with the provider binary as the image
//! entrypoint, run as UID 2000 ("embed runtime image").
//!
//! Layers are uncompressed tars (`application/vnd.oci.image.layer.v1.tar`), which OCI allows;
//! pushing to a registry is left to standard tools (`crane push`, `skopeo copy oci:...`).

use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Media types.
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// Config media type.
pub const CONFIG: &str = "application/vnd.oci.image.config.v1+json";
/// Uncompressed layer media type.
pub const LAYER: &str = "application/vnd.oci.image.layer.v1.tar";
/// Where the binary goes in the image.
pub const BINARY_PATH: &str = "usr/local/bin/provider";

fn digest(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// A ustar archive of regular files (`path`, `mode`, contents), as a layer needs.
pub fn tar(files: &[(&str, u32, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (path, mode, data) in files {
        let mut h = [0u8; 512];
        let name = path.as_bytes();
        h[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
        let octal = |v: u64, width: usize| format!("{v:0>w$o}\0", w = width - 1).into_bytes();
        h[100..108].copy_from_slice(&octal(u64::from(*mode), 8));
        h[108..116].copy_from_slice(&octal(0, 8));
        h[116..124].copy_from_slice(&octal(0, 8));
        h[124..136].copy_from_slice(&octal(data.len() as u64, 12));
        h[136..148].copy_from_slice(&octal(0, 12));
        h[148..156].copy_from_slice(b"        ");
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// Reads the regular files of a ustar archive written by [`tar`].
#[cfg(test)]
pub fn untar(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 512 <= bytes.len() {
        let h = &bytes[at..at + 512];
        if h.iter().all(|b| *b == 0) {
            break;
        }
        let name = String::from_utf8_lossy(&h[..100])
            .trim_end_matches('\0')
            .to_string();
        let size_text = String::from_utf8_lossy(&h[124..135])
            .trim_end_matches('\0')
            .trim()
            .to_string();
        let size = usize::from_str_radix(&size_text, 8).unwrap_or(0);
        let start = at + 512;
        let end = (start + size).min(bytes.len());
        out.push((name, bytes[start..end].to_vec()));
        at = start + size.div_ceil(512) * 512;
    }
    out
}

/// Writes the OCI image layout of a package into `dir` and returns the manifest.
pub fn write_layout(
    dir: &Path,
    package_yaml: &str,
    binary: Option<&[u8]>,
) -> std::io::Result<Value> {
    let blobs = dir.join("blobs").join("sha256");
    std::fs::create_dir_all(&blobs)?;
    let put = |bytes: &[u8]| -> std::io::Result<String> {
        let d = digest(bytes);
        std::fs::write(blobs.join(d.trim_start_matches("sha256:")), bytes)?;
        Ok(d)
    };
    let base = tar(&[("package.yaml", 0o644, package_yaml.as_bytes())]);
    let base_digest = put(&base)?;
    let mut layers = vec![
        json!({"mediaType": LAYER, "digest": base_digest, "size": base.len(),
                                 "annotations": {"io.crossplane.xpkg": "base"}}),
    ];
    let mut diff_ids = vec![base_digest.clone()];
    let mut config = json!({
        "User": "2000:2000",
        "Labels": {format!("io.crossplane.xpkg:{base_digest}"): "base"}
    });
    if let Some(bin) = binary {
        let layer = tar(&[(BINARY_PATH, 0o755, bin)]);
        let d = put(&layer)?;
        layers.push(json!({"mediaType": LAYER, "digest": d, "size": layer.len()}));
        diff_ids.push(d);
        config["Entrypoint"] = json!([format!("/{BINARY_PATH}")]);
        config["ExposedPorts"] = json!({"8080/tcp": {}});
    }
    let config_blob = serde_json::to_vec(&json!({
        "architecture": "amd64", "os": "linux", "config": config,
        "rootfs": {"type": "layers", "diff_ids": diff_ids}
    }))
    .unwrap_or_default();
    let config_digest = put(&config_blob)?;
    let manifest = json!({
        "schemaVersion": 2, "mediaType": MANIFEST,
        "config": {"mediaType": CONFIG, "digest": config_digest, "size": config_blob.len()},
        "layers": layers
    });
    let manifest_blob = serde_json::to_vec(&manifest).unwrap_or_default();
    let manifest_digest = put(&manifest_blob)?;
    std::fs::write(dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#)?;
    let index = json!({"schemaVersion": 2, "manifests": [
        {"mediaType": MANIFEST, "digest": manifest_digest, "size": manifest_blob.len()}]});
    std::fs::write(
        dir.join("index.json"),
        serde_json::to_vec_pretty(&index).unwrap_or_default(),
    )?;
    Ok(manifest)
}

/// Reads a blob of a layout.
#[cfg(test)]
pub fn read_blob(dir: &Path, digest: &str) -> std::io::Result<Vec<u8>> {
    std::fs::read(
        dir.join("blobs")
            .join("sha256")
            .join(digest.trim_start_matches("sha256:")),
    )
}
