//! The Crossplane package as an OCI image layout that is also the provider's runtime image
//! (docs/managed-reconciler.md §15.7, Crossplane's "embedded runtime image").
//!
//! Layers, in order:
//! 1. the base: the files a glibc-linked binary needs to start, taken from the build
//!    machine's Debian packages as distroless images take them (the dynamic loader and the
//!    libraries `ldd` names, the CA bundle), `/etc/passwd` and `/etc/group` with the user
//!    `provider` (UID/GID 2000), `/tmp` (mode 1777) and the provider's home;
//! 2. the provider binary, `/usr/local/bin/provider`, the entrypoint;
//! 3. the package: `package.yaml` at the root, annotated `io.crossplane.xpkg: base` in the
//!    manifest and recorded as the config label `io.crossplane.xpkg:<layer digest>=base`
//!    (the tarball format loses layer annotations).
//!
//! Without a binary the image holds only the package layer. Builds are reproducible: entries
//! sorted, owner 0:0 (2000:2000 for the home), mtime `SOURCE_DATE_EPOCH` or 0, fixed modes, gzip
//! with a zero header timestamp, JSON with sorted keys; two builds give identical digests.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

use flate2::{Compression, GzBuilder};
use oci_spec::image::{
    Arch, ConfigBuilder, Descriptor, DescriptorBuilder, Digest as OciDigest,
    ImageConfigurationBuilder, ImageIndexBuilder, ImageManifestBuilder, MediaType,
    OciLayoutBuilder, Os, RootFsBuilder,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Where the binary goes in the image.
pub const BINARY_PATH: &str = "usr/local/bin/provider";
/// The annotation (and config label value) that marks the package layer.
pub const XPKG_ANNOTATION: &str = "io.crossplane.xpkg";
/// The runtime user and group.
pub const UID: u64 = 2000;
/// The ports the providers listen on: metrics (`--metrics-bind-address`) and health probes
/// (`--health-probe-bind-address`).
pub const PORTS: [&str; 2] = ["8080/tcp", "8081/tcp"];
/// The CA bundle of Debian's `ca-certificates`.
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Packaging errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("OCI structure: {0}")]
    Oci(#[from] oci_spec::OciSpecError),
    #[error("{0}")]
    Base(String),
}

fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::Io(what.to_string(), e)
}

/// `sha256:<hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// What an entry of a layer is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A regular file.
    File(Vec<u8>),
    /// A directory.
    Dir,
}

/// One entry of a layer: path (relative, no leading `/`), mode, owner and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub mode: u32,
    pub owner: u64,
    pub node: Node,
}

impl Entry {
    pub fn file(path: &str, mode: u32, data: Vec<u8>) -> Entry {
        Entry {
            path: path.trim_start_matches('/').to_string(),
            mode,
            owner: 0,
            node: Node::File(data),
        }
    }

    pub fn dir(path: &str, mode: u32) -> Entry {
        Entry {
            path: path
                .trim_start_matches('/')
                .trim_end_matches('/')
                .to_string(),
            mode,
            owner: 0,
            node: Node::Dir,
        }
    }
}

/// The mtime of every entry: `SOURCE_DATE_EPOCH` when set, else 0.
fn mtime() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// A reproducible tar of `entries`: the parent directories added (0755, root), sorted by
/// path, fixed owner and mtime.
pub fn tar(entries: &[Entry]) -> Result<Vec<u8>, Error> {
    let mut all: BTreeMap<String, Entry> = BTreeMap::new();
    for e in entries {
        let mut parent = Path::new(&e.path).parent();
        while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
            let key = p.to_string_lossy().to_string();
            all.entry(key.clone())
                .or_insert_with(|| Entry::dir(&key, 0o755));
            parent = p.parent();
        }
        all.insert(e.path.clone(), e.clone());
    }
    let mtime = mtime();
    let mut builder = tar::Builder::new(Vec::new());
    for (path, e) in &all {
        let mut h = tar::Header::new_ustar();
        h.set_mode(e.mode);
        h.set_uid(e.owner);
        h.set_gid(e.owner);
        h.set_mtime(mtime);
        h.set_username("").map_err(io(path))?;
        h.set_groupname("").map_err(io(path))?;
        match &e.node {
            Node::File(data) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_size(data.len() as u64);
                builder
                    .append_data(&mut h, path, data.as_slice())
                    .map_err(io(path))?;
            }
            Node::Dir => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_size(0);
                builder
                    .append_data(&mut h, format!("{path}/"), std::io::empty())
                    .map_err(io(path))?;
            }
        }
    }
    builder.into_inner().map_err(io("tar"))
}

/// Gzip with a fixed header (no name, mtime 0) and the best compression.
pub fn gzip(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let mut enc = GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), Compression::best());
    enc.write_all(bytes).map_err(io("gzip"))?;
    enc.finish().map_err(io("gzip"))
}

/// A built layer: the compressed blob and the digest of the uncompressed tar (its diff id).
pub struct Layer {
    pub blob: Vec<u8>,
    pub diff_id: String,
}

impl Layer {
    pub fn new(entries: &[Entry]) -> Result<Layer, Error> {
        let tar = tar(entries)?;
        Ok(Layer {
            diff_id: digest(&tar),
            blob: gzip(&tar)?,
        })
    }
}

/// The runtime base: files and the Debian packages they came from (`name=version`).
pub struct Base {
    pub entries: Vec<Entry>,
    pub packages: BTreeSet<String>,
}

/// The files the dynamically linked `binary` needs from this machine (its loader and
/// libraries, as `ldd` lists them), the CA bundle, the user `provider` and `/tmp`.
pub fn base(binary: &Path) -> Result<Base, Error> {
    let mut sources: BTreeSet<PathBuf> = shared_libraries(binary)?;
    sources.insert(PathBuf::from(CA_BUNDLE));
    let mut entries = Vec::new();
    let mut packages = BTreeSet::new();
    for src in &sources {
        // Follow symlinks: the file lands at the path the loader looks for.
        let data = std::fs::read(src).map_err(io(src.display()))?;
        let mode = if src.starts_with("/etc") {
            0o644
        } else {
            0o755
        };
        entries.push(Entry::file(&src.to_string_lossy(), mode, data));
        if let Some(p) = debian_package(src) {
            packages.insert(p);
        }
    }
    entries.push(Entry::file(
        "etc/passwd",
        0o644,
        format!(
            "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nprovider:x:{UID}:{UID}:provider:/home/provider:/sbin/nologin\n"
        )
        .into_bytes(),
    ));
    entries.push(Entry::file(
        "etc/group",
        0o644,
        format!("root:x:0:\nnogroup:x:65534:\nprovider:x:{UID}:\n").into_bytes(),
    ));
    entries.push(Entry::dir("tmp", 0o1777));
    entries.push(Entry {
        owner: UID,
        ..Entry::dir("home/provider", 0o700)
    });
    entries.push(Entry::dir(
        "var/run/secrets/kubernetes.io/serviceaccount",
        0o755,
    ));
    Ok(Base { entries, packages })
}

/// The absolute paths `ldd` names for `binary` (none for a static binary).
fn shared_libraries(binary: &Path) -> Result<BTreeSet<PathBuf>, Error> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .map_err(io("running ldd"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        if text.contains("not a dynamic executable")
            || String::from_utf8_lossy(&out.stderr).contains("not a dynamic executable")
        {
            return Ok(BTreeSet::new());
        }
        return Err(Error::Base(format!(
            "ldd {} failed: {}",
            binary.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let mut libs = BTreeSet::new();
    for line in text.lines() {
        if line.contains("not found") {
            return Err(Error::Base(format!(
                "{}: library not found: {}",
                binary.display(),
                line.trim()
            )));
        }
        // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` or `/lib64/ld-linux... (0x...)`
        let path = match line.split_once("=>") {
            Some((_, right)) => right.split_whitespace().next(),
            None => line.split_whitespace().next(),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            libs.insert(PathBuf::from(p));
        }
    }
    Ok(libs)
}

/// `package=version` of the Debian package that owns `path` (or its canonical path).
fn debian_package(path: &Path) -> Option<String> {
    let candidates = [Some(path.to_path_buf()), std::fs::canonicalize(path).ok()];
    for p in candidates.into_iter().flatten() {
        let out = Command::new("dpkg").arg("-S").arg(&p).output().ok()?;
        if !out.status.success() {
            continue;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let name = text.lines().next()?.split(':').next()?.trim().to_string();
        let version = Command::new("dpkg-query")
            .args(["-W", "-f", "${Version}", &name])
            .output()
            .ok()?;
        return Some(format!(
            "{name}={}",
            String::from_utf8_lossy(&version.stdout).trim()
        ));
    }
    None
}

/// What the image says about itself.
pub struct Meta<'a> {
    /// `provider-artifactory`, ...
    pub name: &'a str,
    pub description: &'a str,
    pub version: &'a str,
}

/// The runtime part of an image: the base and the binary.
pub struct Runtime {
    pub base: Base,
    pub binary: Vec<u8>,
}

/// JSON with every object's keys sorted (the OCI structures keep labels in hash maps).
fn canonical_json(v: &impl serde::Serialize) -> Result<Vec<u8>, Error> {
    fn sort(v: Value) -> Value {
        match v {
            Value::Object(m) => {
                let sorted: BTreeMap<String, Value> =
                    m.into_iter().map(|(k, v)| (k, sort(v))).collect();
                Value::Object(sorted.into_iter().collect())
            }
            Value::Array(a) => Value::Array(a.into_iter().map(sort).collect()),
            other => other,
        }
    }
    let v = serde_json::to_value(v).map_err(|e| Error::Base(e.to_string()))?;
    serde_json::to_vec(&sort(v)).map_err(|e| Error::Base(e.to_string()))
}

fn oci_digest(d: &str) -> Result<OciDigest, Error> {
    OciDigest::from_str(d).map_err(Error::Oci)
}

/// What [`write_layout`] wrote.
pub struct Written {
    /// The manifest's digest (what the index names).
    pub manifest_digest: String,
    /// The manifest as JSON.
    pub manifest: Value,
    /// The sum of the compressed layers and the config (what a pull moves).
    pub compressed: u64,
    /// The sum of the uncompressed layers.
    pub uncompressed: u64,
}

/// Writes the OCI image layout of a package into `dir` (created; must be empty or absent).
pub fn write_layout(
    dir: &Path,
    meta: &Meta<'_>,
    package_yaml: &str,
    runtime: Option<&Runtime>,
) -> Result<Written, Error> {
    let blobs = dir.join("blobs").join("sha256");
    std::fs::create_dir_all(&blobs).map_err(io(blobs.display()))?;
    let put = |bytes: &[u8]| -> Result<String, Error> {
        let d = digest(bytes);
        let path = blobs.join(d.trim_start_matches("sha256:"));
        std::fs::write(&path, bytes).map_err(io(path.display()))?;
        Ok(d)
    };
    let mut layers: Vec<(Layer, bool)> = Vec::new();
    let mut uncompressed = 0u64;
    let mut labels: BTreeMap<String, String> = BTreeMap::from([
        ("org.opencontainers.image.title".into(), meta.name.into()),
        (
            "org.opencontainers.image.description".into(),
            meta.description.into(),
        ),
        (
            "org.opencontainers.image.version".into(),
            meta.version.into(),
        ),
        (
            "org.opencontainers.image.source".into(),
            "https://github.com/jfrog/crossplane-providers".into(),
        ),
        (
            "org.opencontainers.image.licenses".into(),
            "Apache-2.0".into(),
        ),
        (
            "org.opencontainers.image.vendor".into(),
            "JFrog Crossplane provider maintainers".into(),
        ),
    ]);
    if let Some(rt) = runtime {
        let base = Layer::new(&rt.base.entries)?;
        uncompressed += tar(&rt.base.entries)?.len() as u64;
        layers.push((base, false));
        let bin = [Entry::file(BINARY_PATH, 0o755, rt.binary.clone())];
        uncompressed += tar(&bin)?.len() as u64;
        layers.push((Layer::new(&bin)?, false));
        if !rt.base.packages.is_empty() {
            labels.insert(
                "org.debian.packages".into(),
                rt.base
                    .packages
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    let pkg = [Entry::file(
        "package.yaml",
        0o644,
        package_yaml.as_bytes().to_vec(),
    )];
    uncompressed += tar(&pkg)?.len() as u64;
    layers.push((Layer::new(&pkg)?, true));

    let mut descriptors: Vec<Descriptor> = Vec::new();
    let mut compressed = 0u64;
    for (layer, is_package) in &layers {
        let d = put(&layer.blob)?;
        compressed += layer.blob.len() as u64;
        let mut desc = Descriptor::new(
            MediaType::ImageLayerGzip,
            layer.blob.len() as u64,
            oci_digest(&d)?,
        );
        if *is_package {
            desc.set_annotations(Some(
                [(XPKG_ANNOTATION.to_string(), "base".to_string())].into(),
            ));
            labels.insert(format!("{XPKG_ANNOTATION}:{d}"), "base".into());
        }
        descriptors.push(desc);
    }

    let mut config = ConfigBuilder::default().labels(
        labels
            .into_iter()
            .collect::<std::collections::HashMap<_, _>>(),
    );
    if runtime.is_some() {
        config = config
            .user(format!("{UID}:{UID}"))
            .entrypoint(vec![format!("/{BINARY_PATH}")])
            .env(vec![
                "PATH=/usr/local/bin:/usr/bin:/bin".to_string(),
                format!("SSL_CERT_FILE={CA_BUNDLE}"),
            ])
            .exposed_ports(PORTS.iter().map(|p| p.to_string()).collect::<Vec<_>>())
            .working_dir("/home/provider");
    }
    let image_config = ImageConfigurationBuilder::default()
        .architecture(Arch::Amd64)
        .os(Os::Linux)
        .config(config.build()?)
        .rootfs(
            RootFsBuilder::default()
                .typ("layers")
                .diff_ids(
                    layers
                        .iter()
                        .map(|(l, _)| l.diff_id.clone())
                        .collect::<Vec<_>>(),
                )
                .build()?,
        )
        .build()?;
    let config_blob = canonical_json(&image_config)?;
    let config_digest = put(&config_blob)?;
    compressed += config_blob.len() as u64;

    let manifest = ImageManifestBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageManifest)
        .config(Descriptor::new(
            MediaType::ImageConfig,
            config_blob.len() as u64,
            oci_digest(&config_digest)?,
        ))
        .layers(descriptors)
        .build()?;
    let manifest_blob = canonical_json(&manifest)?;
    let manifest_digest = put(&manifest_blob)?;
    let index = ImageIndexBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageIndex)
        .manifests(vec![
            DescriptorBuilder::default()
                .media_type(MediaType::ImageManifest)
                .size(manifest_blob.len() as u64)
                .digest(oci_digest(&manifest_digest)?)
                .annotations(
                    [(
                        "org.opencontainers.image.ref.name".to_string(),
                        meta.version.to_string(),
                    )]
                    .into_iter()
                    .collect::<std::collections::HashMap<_, _>>(),
                )
                .build()?,
        ])
        .build()?;
    let index_path = dir.join("index.json");
    std::fs::write(&index_path, canonical_json(&index)?).map_err(io(index_path.display()))?;
    let layout_path = dir.join("oci-layout");
    std::fs::write(
        &layout_path,
        canonical_json(
            &OciLayoutBuilder::default()
                .image_layout_version("1.0.0")
                .build()?,
        )?,
    )
    .map_err(io(layout_path.display()))?;
    Ok(Written {
        manifest_digest,
        manifest: serde_json::from_slice(&manifest_blob).map_err(|e| Error::Base(e.to_string()))?,
        compressed,
        uncompressed,
    })
}

/// Reads a blob of a layout.
pub fn read_blob(dir: &Path, digest: &str) -> std::io::Result<Vec<u8>> {
    std::fs::read(
        dir.join("blobs")
            .join("sha256")
            .join(digest.trim_start_matches("sha256:")),
    )
}

/// An entry read from a layer: path, contents (`None`: a directory), mode, uid.
pub type LayerEntry = (String, Option<Vec<u8>>, u32, u64);

/// The entries of a gzip-compressed layer.
pub fn read_layer(blob: &[u8]) -> std::io::Result<Vec<LayerEntry>> {
    use std::io::Read;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(blob));
    let mut out = Vec::new();
    for e in archive.entries()? {
        let mut e = e?;
        let path = e
            .path()?
            .to_string_lossy()
            .trim_end_matches('/')
            .to_string();
        let (mode, uid) = (e.header().mode()?, e.header().uid()?);
        let data = if e.header().entry_type().is_dir() {
            None
        } else {
            let mut v = Vec::new();
            e.read_to_end(&mut v)?;
            Some(v)
        };
        out.push((path, data, mode, uid));
    }
    Ok(out)
}

/// Crossplane's package parser, as it reads a package image: the layer annotated
/// `io.crossplane.xpkg: base` (one, and named by the config label too) holds `package.yaml`,
/// whose first document is the one `meta.pkg.crossplane.io` Provider and the rest only CRDs.
/// Returns the Provider's name and the CRD names.
pub fn parse_package(dir: &Path) -> Result<(String, Vec<String>), String> {
    let index: Value = serde_json::from_slice(
        &std::fs::read(dir.join("index.json")).map_err(|e| format!("index.json: {e}"))?,
    )
    .map_err(|e| format!("index.json: {e}"))?;
    let manifests = index["manifests"].as_array().cloned().unwrap_or_default();
    if manifests.len() != 1 {
        return Err(format!(
            "{} manifests in the index, want 1",
            manifests.len()
        ));
    }
    let blob = |d: &Value| -> Result<Vec<u8>, String> {
        let d = d.as_str().ok_or("descriptor without digest")?;
        let bytes = read_blob(dir, d).map_err(|e| format!("blob {d}: {e}"))?;
        if digest(&bytes) != d {
            return Err(format!("blob {d} does not match its digest"));
        }
        Ok(bytes)
    };
    let manifest: Value = serde_json::from_slice(&blob(&manifests[0]["digest"])?)
        .map_err(|e| format!("manifest: {e}"))?;
    let config: Value = serde_json::from_slice(&blob(&manifest["config"]["digest"])?)
        .map_err(|e| format!("config: {e}"))?;
    let annotated: Vec<&Value> = manifest["layers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| l["annotations"][XPKG_ANNOTATION] == "base")
        .collect();
    if annotated.len() != 1 {
        return Err(format!("{} layers annotated base, want 1", annotated.len()));
    }
    let layer_digest = annotated[0]["digest"].as_str().unwrap_or_default();
    let labelled: Vec<&String> = config["config"]["Labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| k.starts_with(&format!("{XPKG_ANNOTATION}:")) && *v == "base")
        .map(|(k, _)| k)
        .collect();
    if labelled != [&format!("{XPKG_ANNOTATION}:{layer_digest}")] {
        return Err(format!(
            "config labels {labelled:?} do not name the base layer"
        ));
    }
    let files = read_layer(&blob(&annotated[0]["digest"])?).map_err(|e| e.to_string())?;
    let yaml = match files.as_slice() {
        [(name, Some(data), _, _)] if name == "package.yaml" => {
            String::from_utf8(data.clone()).map_err(|e| e.to_string())?
        }
        other => {
            return Err(format!(
                "the package layer holds {:?}, want only package.yaml",
                other.iter().map(|f| &f.0).collect::<Vec<_>>()
            ));
        }
    };
    let mut provider = None;
    let mut crds = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(&yaml).enumerate() {
        let v: Value = serde::Deserialize::deserialize(doc).map_err(|e| e.to_string())?;
        let name = v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match (v["apiVersion"].as_str(), v["kind"].as_str()) {
            (Some(api), Some("Provider")) if api.starts_with("meta.pkg.crossplane.io/") => {
                if i != 0 {
                    return Err(format!("meta Provider is document {i}, want the first"));
                }
                provider = Some(name);
            }
            (Some("apiextensions.k8s.io/v1"), Some("CustomResourceDefinition")) if i > 0 => {
                crds.push(name)
            }
            other => return Err(format!("document {i} is {other:?}")),
        }
    }
    Ok((provider.ok_or("no meta Provider")?, crds))
}
