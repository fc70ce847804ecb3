//! The CRDs speak to the people who read them with `kubectl explain`: no description talks
//! about Terraform's internals, Upjet, the wire format or a catalog's mistakes, and
//! `initProvider` says what it is for this provider.

#[cfg(test)]
mod tests {
    use serde_json::Value;

    fn descriptions(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "description"
                        && let Some(s) = x.as_str()
                    {
                        out.push((path.to_string(), s.to_string()));
                    } else {
                        descriptions(x, &format!("{path}.{k}"), out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| descriptions(x, path, out)),
            _ => {}
        }
    }

    fn tf_word(s: &str) -> bool {
        s.match_indices("TF").any(|(i, _)| {
            !s[..i]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
                && !s[i + 2..].chars().next().is_some_and(char::is_alphanumeric)
        })
    }

    #[test]
    fn no_crd_description_talks_about_terraform_internals() {
        let root = crate::root();
        let mut bad = Vec::new();
        let mut init = 0;
        let mut seen = 0;
        for p in ["artifactory", "xray", "project", "platform"] {
            for e in std::fs::read_dir(root.join("crds").join(p)).expect("crds") {
                let path = e.expect("entry").path();
                let doc: Value =
                    serde_yaml::from_str(&std::fs::read_to_string(&path).expect("read"))
                        .expect("yaml");
                let mut all = Vec::new();
                descriptions(&doc, "", &mut all);
                seen += all.len();
                for (at, d) in all {
                    if at.ends_with(".initProvider") {
                        init += 1;
                        assert!(d.contains("only when the provider creates"), "{d}");
                    }
                    let hit = [
                        "ignore_changes",
                        "terraform ignore",
                        "Upjet",
                        "Wire:",
                        " stale",
                        "Terraform schema",
                        "Terraform code",
                        "(artifactory_",
                        "(xray_",
                        "(project_",
                        "(platform_",
                    ]
                    .iter()
                    .any(|m| d.contains(m))
                        || tf_word(&d);
                    if hit {
                        bad.push(format!(
                            "{}{at}: {d}",
                            path.file_name().unwrap().to_string_lossy()
                        ));
                    }
                }
            }
        }
        assert_eq!(init, 520, "an initProvider per CRD");
        assert!(seen > 10_000, "{seen} descriptions");
        assert!(
            bad.is_empty(),
            "{} descriptions: {:#?}",
            bad.len(),
            &bad[..bad.len().min(20)]
        );
    }
}
