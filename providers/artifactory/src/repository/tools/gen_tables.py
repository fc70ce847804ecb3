#!/usr/bin/env python3
"""One-off generator: repository catalog JSON -> ../tables.rs (checked in).

Usage: gen_tables.py <path to artifactory-repository.json>  (writes ../tables.rs)

The catalog is read only here, at generation time; the provider never reads it. Corrections to
the catalog are applied in FIXES / field_fix() below and documented in ../mod.rs
("Catalog corrections").
"""
import json, os, re, sys

cat = json.load(open(sys.argv[1]))
T = cat["templates"]

def rs(s):
    return json.dumps(s)  # a JSON string literal is a valid Rust string literal for our text

def const_name(n):
    return re.sub(r"[^A-Z0-9]+", "_", n.upper()).strip("_")

ENUM_RE = re.compile(r"(?:One of|Values) ([A-Za-z0-9_\-]+(?:, [A-Za-z0-9_\-]+)+)")

def enums(f):
    m = ENUM_RE.search(f.get("notes") or "")
    if not m:
        return []
    return [v.strip() for v in m.group(1).split(",")]

def field_fix(f, ctx):
    """Catalog corrections and per-field normalisation rules. ctx = template or Kind name."""
    f = dict(f)
    tf = f["tf"]
    norm = "Norm::Plain"
    flags = []
    notes = f.get("notes") or ""
    # Which fields JFrog fills server-side when unset: Observe late-initialises them and
    # unset means "keep whatever JFrog has".
    if tf in ("project_key", "project_environments"):
        # Assignment may be owned by a project-side Kind; unset = not managed here.
        flags.append("ignore_unset")
        f["default"] = None
    if tf == "project_environments":
        norm = "Norm::WhenInProject"
    if f.get("computed") and f.get("default") is None and not f.get("status_only") and not f.get("sensitive"):
        if tf not in ("project_key", "project_environments"):
            flags.append("late_init")
    if tf == "content_synchronisation":
        flags.append("ignore_unset")
    if tf == "remote_repo_layout_ref":
        norm = "Norm::NoClear"
    if tf == "default_deployment_repo":
        norm = "Norm::ClearWithSentinel"
    if tf in ("v3_feed_url", "symbol_server_url"):
        norm = "Norm::KeepWhenServerEmpty"
    if tf == "description" and ctx == "remote-base":
        norm = "Norm::CacheSuffix"
    if tf == "debian_default_architectures":
        norm = "Norm::CommaSet"
    if tf == "external_dependencies_patterns" and ctx == "remote-oci-like":
        norm = 'Norm::OnlyWhen("externalDependenciesEnabled")'
    if tf == "url" and ctx == "member":
        norm = "Norm::TrimSlash"
    # Catalog corrections (see mod.rs):
    if tf == "anonymous_access" and ctx == "RemoteCargoRepository":
        f["default"] = False
    if tf == "tag_retention" and ctx == "federated-tags":
        f["default"] = 1
    if tf == "block_pushing_schema1" and ctx in ("FederatedDockerRepository", "FederatedDockerV2Repository"):
        f["default"] = False
        flags = [x for x in flags if x != "late_init"]
    if tf == "max_unique_tags" and ctx == "FederatedDockerV1Repository":
        f["status_only"] = True
    if tf == "index_compression_formats" and f.get("wire") is None:
        pass  # accepted and ignored, as upstream; documented
    if tf == "external_dependencies_patterns" and "late_init" not in flags:
        # JFrog answers ["**"] when none were sent: server-defaulted.
        flags.append("late_init")
    if tf == "index_compression_formats" and ctx == "FederatedDebianRepository":
        # Omitted when empty, then JFrog answers ["bz2"]: the local Kind's default.
        f["default"] = ["bz2"]
    if tf == "external_dependencies_patterns" and ctx == "RemoteHelmRepository":
        norm = 'Norm::OnlyWhen("externalDependenciesEnabled")'
    f["_norm"] = norm
    f["_flags"] = flags
    return f

def dv(ty, d):
    if d is None:
        return "Dv::None"
    if isinstance(d, bool):
        return f"Dv::Bool({'true' if d else 'false'})"
    if isinstance(d, int):
        return f"Dv::Int({d})"
    if isinstance(d, str):
        return f"Dv::Str({rs(d)})"
    if isinstance(d, list):
        return "Dv::List(&[" + ", ".join(rs(x) for x in d) + "])"
    raise ValueError(d)

children_consts = {}

def ty_of(f, ctx):
    t = f["type"]
    if t == "string": return "Ty::Str"
    if t == "bool": return "Ty::Bool"
    if t == "int": return "Ty::Int"
    if t == "list<string>": return "Ty::List"
    if t == "set<string>": return "Ty::Set"
    if t in ("list<object>", "set<object>"):
        name = const_name(f["crd"]) + "_FIELDS"
        body = [field_expr(c, "member" if f["tf"] == "member" else ctx) for c in f["children"]]
        children_consts[name] = body
        if f["tf"] == "content_synchronisation":
            return f"Ty::Block({name})"
        if t == "set<object>":
            return f"Ty::ObjSet({name})"
        return f"Ty::ObjList({name})"
    raise ValueError(t)

def field_expr(f, ctx):
    f = field_fix(f, ctx)
    crd = f["crd"]
    wire = f.get("wire")
    w = f"Some({rs(wire)})" if wire else "None"
    s = f"Field::new({rs(crd)}, {rs(f['tf'])}, {w}, {ty_of(f, ctx)})"
    if f.get("default") is not None:
        s += f".default({dv(f['type'], f['default'])})"
    if f.get("required"): s += ".required()"
    if f.get("sensitive"): s += ".sensitive()"
    if f.get("write_only"): s += ".write_only()"
    if f.get("immutable"): s += ".immutable()"
    if f.get("status_only"): s += ".status_only()"
    for fl in f["_flags"]:
        s += f".{fl}()"
    if f["_norm"] != "Norm::Plain":
        s += f".norm({f['_norm']})"
    e = enums(f)
    if e:
        s += ".enums(&[" + ", ".join(rs(x) for x in e) + "])"
    desc = f.get("description") or ""
    s += f".doc({rs(desc)})"
    return s

out = []
out.append("""//! The repository Kind declarations as data: shared field sets (class bases and mixins, each
//! written once) and one line per Kind.
//!
//! GENERATED by `tools/gen_tables.py` from the repository catalog (extracted from
//! jfrog/terraform-provider-artifactory v12.11.7/v12.11.8) with the corrections listed in
//! `mod.rs`; regenerate rather than edit by hand. The provider never reads the catalog.

use super::decl::{Class, Dv, Field, KindDecl, Norm, Ty};

/// One Kind declaration.
macro_rules! k {
    ($kind:ident, $class:ident, $pt:expr, $extends:expr, [$($mixin:expr),*], [$($field:expr),*],
     {$(($otf:expr, $odv:expr)),*}, {$(($fw:expr, $fdv:expr)),*}) => {
        KindDecl {
            kind: stringify!($kind),
            class: Class::$class,
            package_type: $pt,
            extends: $extends,
            mixins: &[$($mixin),*],
            fields: &[$($field),*],
            default_overrides: &[$(($otf, $odv)),*],
            fixed_body: &[$(($fw, $fdv)),*],
        }
    };
}
""")

tmpl_consts = {}
for tname, fields in T.items():
    cname = const_name(tname)
    tmpl_consts[tname] = cname
    exprs = [field_expr(f, tname) for f in fields if f.get("crd")]
    out.append(f"/// Template `{tname}`.\npub const {cname}: &[Field] = &[\n" + "".join(f"    {e},\n" for e in exprs) + "];\n")

# Kind-specific fields, deduplicated by generated expression.
kfield_names = {}
kfield_out = []
def kfield(f, kind):
    e = field_expr(f, kind)
    if e in kfield_names:
        return kfield_names[e]
    base = const_name(f["tf"])
    name = base
    cls = re.match(r"[A-Z][a-z]+", kind).group(0).upper()
    if name in kfield_names.values():
        name = f"{base}_{cls}"
    if name in kfield_names.values():
        name = f"{base}_{const_name(re.sub('Repository$', '', kind))}"
    kfield_names[e] = name
    kfield_out.append(f"const {name}: Field = {e};\n")
    return name

kinds_out = []
counts = {}
for k in cat["kinds"]:
    names = [kfield(f, k["kind"]) for f in k["fields"] if f.get("crd")]
    cls = k["rclass"].capitalize()
    counts[cls] = counts.get(cls, 0) + 1
    mix = ", ".join(tmpl_consts[m] for m in k["mixins"])
    ov = []
    for tf, d in k["default_overrides"].items():
        ov.append(f"({rs(tf)}, {dv(None, d)})")
    fixed = []
    for w, v in k["fixed_body"].items():
        if w in ("rclass", "packageType"):
            continue
        fixed.append(f"({rs(w)}, {dv(None, v)})")
    kinds_out.append(
        f"    k!({k['kind']}, {cls}, {rs(k['package_type'])}, {tmpl_consts[k['extends']]}, [{mix}], [{', '.join(names)}], {{{', '.join(ov)}}}, {{{', '.join(fixed)}}}),\n")

for name, body in children_consts.items():
    out.append(f"/// Nested block fields.\npub const {name}: &[Field] = &[\n" + "".join(f"    {e},\n" for e in body) + "];\n")
out.append("// Kind-specific fields (shared where two Kinds declare the same field).\n" + "".join(kfield_out))
out.append("""/// Every repository Kind: `k!(Kind, class, packageType, extends, [mixins], [own fields],
/// {default overrides by Terraform name}, {fixed body members besides rclass/packageType})`.
pub const KINDS: &[KindDecl] = &[
""" + "".join(kinds_out) + "];\n")
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tables.rs")
open(path, "w").write("\n".join(out))
print(counts, len(cat["kinds"]))
