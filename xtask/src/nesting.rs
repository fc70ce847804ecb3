//! Terraform's nesting modes as the CRDs render them, checked against the catalog that
//! records them (`catalog/*.json`, field `type`): a single-nested attribute or block
//! (`object`) is a plain object, as Upjet renders it; a list or set block (`block`,
//! `list<object>`, `set<object>`, even with a maximum of one) is an array; a map of values
//! (`map<...>`) an object with `additionalProperties`. Every Kind, both scopes, every level.

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use serde_json::Value;

    /// The catalog's nesting mode of a field type, if it is a nested or map type.
    fn mode(ty: &str) -> Option<&'static str> {
        match ty {
            "object" => Some("single"),
            "block" | "list<object>" => Some("list"),
            "set<object>" => Some("set"),
            t if t.starts_with("map<") => Some("map"),
            _ => None,
        }
    }

    /// Every generated CRD of `provider`, by Kind: the two scopes' `forProvider` schemas.
    fn crds(root: &Path, provider: &str) -> BTreeMap<String, Vec<(String, Value)>> {
        let mut out: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
        for e in std::fs::read_dir(root.join("crds").join(provider)).expect("crds") {
            let path = e.expect("entry").path();
            let doc: Value =
                serde_yaml::from_str(&std::fs::read_to_string(&path).expect("read")).expect("yaml");
            let kind = doc["spec"]["names"]["kind"]
                .as_str()
                .expect("kind")
                .to_string();
            let fp = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
                ["properties"]["forProvider"]
                .clone();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            out.entry(kind).or_default().push((name, fp));
        }
        out
    }

    /// The catalog fields of a Kind: its templates' (`extends`, chained) and its own.
    fn fields_of(catalog: &Value, kind: &Value) -> Vec<Value> {
        let mut fields = Vec::new();
        let mut ext = kind["extends"].as_str().map(str::to_string);
        while let Some(t) = ext {
            let tpl = &catalog["templates"][&t];
            let list = if tpl.is_array() { tpl } else { &tpl["fields"] };
            fields.extend(list.as_array().cloned().unwrap_or_default());
            ext = tpl["extends"].as_str().map(str::to_string);
        }
        fields.extend(kind["fields"].as_array().cloned().unwrap_or_default());
        fields
    }

    /// Check `fields` against the object schema `node`; returns (checked, problems).
    fn check(
        fields: &[Value],
        node: &Value,
        at: &str,
        counts: &mut BTreeMap<&'static str, usize>,
        problems: &mut Vec<String>,
    ) {
        for f in fields {
            let (Some(crd), Some(ty)) = (f["crd"].as_str(), f["type"].as_str()) else {
                continue;
            };
            let Some(m) = mode(ty) else { continue };
            // A map of secrets is rendered as a Secret reference (its values never sit in
            // the manifest), not as a map.
            if crd.ends_with("SecretRef") {
                continue;
            }
            // Fields the CRD does not carry in forProvider (identifiers, status-only,
            // dropped) are not rendered there.
            let Some(s) = node["properties"].get(crd) else {
                continue;
            };
            let path = format!("{at}{crd}");
            let t = s["type"].as_str().unwrap_or("");
            let ok = match m {
                "single" => {
                    t == "object" && s.get("properties").is_some() && s.get("items").is_none()
                }
                "list" | "set" => t == "array" && s["items"]["type"] == "object",
                _ => t == "object" && s.get("additionalProperties").is_some(),
            };
            *counts.entry(m).or_default() += 1;
            if !ok {
                problems.push(format!(
                    "{path}: catalog {ty} ({m}) but the CRD renders type {t:?}"
                ));
                continue;
            }
            let children = f["children"].as_array().cloned().unwrap_or_default();
            if !children.is_empty() {
                let inner = if t == "array" { &s["items"] } else { s };
                check(&children, inner, &format!("{path}."), counts, problems);
            }
        }
    }

    #[test]
    fn crds_render_each_fields_terraform_nesting_mode() {
        let root = crate::root();
        let mut counts = BTreeMap::new();
        let mut problems = Vec::new();
        let mut singles = Vec::new();
        for (file, provider) in [
            ("artifactory-repository", "artifactory"),
            ("artifactory-other", "artifactory"),
            ("xray", "xray"),
            ("project", "project"),
            ("platform", "platform"),
        ] {
            let catalog: Value = serde_json::from_str(
                &std::fs::read_to_string(root.join("catalog").join(format!("{file}.json")))
                    .expect("catalog"),
            )
            .expect("json");
            let crds = crds(&root, provider);
            for kind in catalog["kinds"].as_array().expect("kinds") {
                let name = kind["kind"].as_str().expect("kind");
                let Some(scopes) = crds.get(name) else {
                    continue;
                };
                assert_eq!(scopes.len(), 2, "{name}: a CRD per scope");
                let fields = fields_of(&catalog, kind);
                for (crd, fp) in scopes {
                    check(&fields, fp, &format!("{crd}: "), &mut counts, &mut problems);
                }
                for f in &fields {
                    if f["type"] == "object" {
                        singles.push(format!("{name}.{}", f["crd"].as_str().unwrap_or("")));
                    }
                }
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
        // Every single-nested attribute the catalog records was found and checked (the
        // nested ones are counted inside their parents), in both scopes.
        assert!(
            counts.get("single").copied().unwrap_or(0) >= 2 * singles.len(),
            "{counts:?}"
        );
        for want in [
            "User.passwordPolicy",
            "VaultConfiguration.config",
            "ReleaseBundleV2.source",
            "PackageCleanupPolicy.searchCriteria",
            "Permission.artifact",
            "OIDCIdentityMapping.tokenSpec",
            "WorkersService.filterCriteria",
            "IgnoreRule.exposures",
        ] {
            assert!(
                singles.iter().any(|s| s == want),
                "{want} not recorded as single-nested: {singles:?}"
            );
        }
        assert!(
            counts["list"] > 100 && counts["set"] > 10 && counts["map"] > 10,
            "{counts:?}"
        );
    }
}
