//! The protobuf form of the `/openapi/v2` document: a Swagger 2.0 JSON document encoded as the
//! `openapi.v2.Document` message of gnostic (`github.com/google/gnostic-models`,
//! `openapiv2/OpenAPIv2.proto`), which client-go's `OpenAPISchema()` decodes.
//!
//! kube-apiserver makes it with gnostic's `ParseDocument(json)` followed by `proto.Marshal`; this
//! is the same mapping written out by hand for the parts of Swagger 2.0 the server emits (and a
//! little more): field numbers from the `.proto`; fields written in field-number order; proto3
//! defaults (empty strings, `false`, `0`) left out; an object that is present is written even
//! when empty (`properties: {}` decodes to a non-nil `Properties`, which matters to kubectl);
//! `x-` keys become `NamedAny` vendor extensions and `default`, `example` and `enum` values
//! become `Any`, both carrying the value as YAML text, as gnostic does (gnostic's YAML is
//! yaml.v3's block style with 4-space indents; ours is serde_yaml's with 2; readers parse it).
//!
//! Deviation: `tags`, `responses` definitions, `headers`, `examples`, `contact`, `license`,
//! OAuth2 security definitions and `file` response schemas are not encoded (the server emits
//! none of them).

use serde_json::Value;

/// A message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }
    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    /// A submessage that is present (written even when empty).
    fn message(&mut self, field: u32, m: Msg) {
        self.bytes(field, &m.0);
    }
    fn string(&mut self, field: u32, v: Option<&Value>) {
        if let Some(s) = v.and_then(Value::as_str).filter(|s| !s.is_empty()) {
            self.bytes(field, s.as_bytes());
        }
    }
    fn strings(&mut self, field: u32, v: Option<&Value>) {
        for s in v.and_then(Value::as_array).into_iter().flatten() {
            if let Some(s) = s.as_str() {
                // Repeated strings keep empty elements.
                self.bytes(field, s.as_bytes());
            }
        }
    }
    fn boolean(&mut self, field: u32, v: Option<&Value>) {
        if v.and_then(Value::as_bool) == Some(true) {
            self.key(field, 0);
            self.varint(1);
        }
    }
    fn int64(&mut self, field: u32, v: Option<&Value>) {
        let n = v.and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)));
        if let Some(n) = n.filter(|n| *n != 0) {
            self.key(field, 0);
            self.varint(n as u64);
        }
    }
    fn double(&mut self, field: u32, v: Option<&Value>) {
        if let Some(f) = v.and_then(Value::as_f64).filter(|f| f.to_bits() != 0) {
            self.key(field, 1);
            self.0.extend_from_slice(&f.to_le_bytes());
        }
    }
    /// An `Any` (the value as YAML), if the key is present.
    fn any(&mut self, field: u32, v: Option<&Value>) {
        if let Some(v) = v {
            self.message(field, any(v));
        }
    }
    /// `repeated NamedAny vendor_extension`: every `x-` key, in document order.
    fn extensions(&mut self, field: u32, v: &Value) {
        for (k, val) in v.as_object().into_iter().flatten() {
            if k.starts_with("x-") {
                let mut named = Msg::default();
                named.bytes(1, k.as_bytes());
                named.message(2, any(val));
                self.message(field, named);
            }
        }
    }
    /// A submessage built from `v[key]` when the key is present.
    fn sub(&mut self, field: u32, v: Option<&Value>, f: fn(&Value) -> Msg) {
        if let Some(v) = v {
            self.message(field, f(v));
        }
    }
    /// `repeated Named<T>` from the entries of an object (all of them, or those `keep` picks).
    fn named(
        &mut self,
        field: u32,
        v: Option<&Value>,
        keep: fn(&str) -> bool,
        f: fn(&Value) -> Msg,
    ) {
        for (k, val) in v.and_then(Value::as_object).into_iter().flatten() {
            if keep(k) {
                let mut named = Msg::default();
                named.bytes(1, k.as_bytes());
                named.message(2, f(val));
                self.message(field, named);
            }
        }
    }
    fn repeated(&mut self, field: u32, v: Option<&Value>, f: fn(&Value) -> Msg) {
        for item in v.and_then(Value::as_array).into_iter().flatten() {
            self.message(field, f(item));
        }
    }
}

fn all(_: &str) -> bool {
    true
}

/// `Any`: field 2 `yaml`.
fn any(v: &Value) -> Msg {
    let mut m = Msg::default();
    let yaml = serde_yaml::to_string(v).unwrap_or_default();
    if !yaml.is_empty() {
        m.bytes(2, yaml.as_bytes());
    }
    m
}

/// Encodes a Swagger 2.0 JSON document as a gnostic `openapi.v2.Document`.
pub fn document(v: &Value) -> Vec<u8> {
    let mut m = Msg::default();
    m.string(1, v.get("swagger"));
    m.sub(2, v.get("info"), info);
    m.string(3, v.get("host"));
    m.string(4, v.get("basePath"));
    m.strings(5, v.get("schemes"));
    m.strings(6, v.get("consumes"));
    m.strings(7, v.get("produces"));
    m.sub(8, v.get("paths"), paths);
    m.sub(9, v.get("definitions"), |d| {
        let mut m = Msg::default();
        m.named(1, Some(d), all, schema);
        m
    });
    m.sub(10, v.get("parameters"), |p| {
        let mut m = Msg::default();
        m.named(1, Some(p), all, parameter);
        m
    });
    m.repeated(12, v.get("security"), security_requirement);
    m.sub(13, v.get("securityDefinitions"), |d| {
        let mut m = Msg::default();
        m.named(1, Some(d), all, security_definition);
        m
    });
    m.sub(15, v.get("externalDocs"), external_docs);
    m.extensions(16, v);
    m.0
}

fn info(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, v.get("title"));
    m.string(2, v.get("version"));
    m.string(3, v.get("description"));
    m.string(4, v.get("termsOfService"));
    m.extensions(7, v);
    m
}

fn external_docs(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, v.get("description"));
    m.string(2, v.get("url"));
    m.extensions(3, v);
    m
}

fn paths(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.extensions(1, v);
    m.named(2, Some(v), |k| k.starts_with('/'), path_item);
    m
}

fn path_item(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, v.get("$ref"));
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        m.sub(field, v.get(method), operation);
    }
    m.repeated(9, v.get("parameters"), parameters_item);
    m.extensions(10, v);
    m
}

fn operation(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.strings(1, v.get("tags"));
    m.string(2, v.get("summary"));
    m.string(3, v.get("description"));
    m.sub(4, v.get("externalDocs"), external_docs);
    m.string(5, v.get("operationId"));
    m.strings(6, v.get("produces"));
    m.strings(7, v.get("consumes"));
    m.repeated(8, v.get("parameters"), parameters_item);
    m.sub(9, v.get("responses"), responses);
    m.strings(10, v.get("schemes"));
    m.boolean(11, v.get("deprecated"));
    m.repeated(12, v.get("security"), security_requirement);
    m.extensions(13, v);
    m
}

/// `ParametersItem`: a `JsonReference` (2) for `$ref`, else a `Parameter` (1).
fn parameters_item(v: &Value) -> Msg {
    let mut m = Msg::default();
    if v.get("$ref").is_some() {
        m.sub(2, Some(v), json_reference);
    } else {
        m.sub(1, Some(v), parameter);
    }
    m
}

fn json_reference(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, v.get("$ref"));
    m.string(2, v.get("description"));
    m
}

/// `Parameter`: a `BodyParameter` (1) for `in: body`, else a `NonBodyParameter` (2) whose
/// sub-schema is chosen by `in`.
fn parameter(v: &Value) -> Msg {
    let mut m = Msg::default();
    match v.get("in").and_then(Value::as_str) {
        Some("body") => {
            let mut b = Msg::default();
            b.string(1, v.get("description"));
            b.string(2, v.get("name"));
            b.string(3, v.get("in"));
            b.boolean(4, v.get("required"));
            b.sub(5, v.get("schema"), schema);
            b.extensions(6, v);
            m.message(1, b);
        }
        place => {
            // header (1) and path (4) have no allowEmptyValue, so their later fields sit one
            // number lower than formData's (2) and query's (3).
            let (field, allow_empty) = match place {
                Some("header") => (1, false),
                Some("formData") => (2, true),
                Some("path") => (4, false),
                _ => (3, true),
            };
            let mut s = Msg::default();
            s.boolean(1, v.get("required"));
            s.string(2, v.get("in"));
            s.string(3, v.get("description"));
            s.string(4, v.get("name"));
            if allow_empty {
                s.boolean(5, v.get("allowEmptyValue"));
            }
            primitive_fields(&mut s, v, if allow_empty { 5 } else { 4 });
            let mut non_body = Msg::default();
            non_body.message(field, s);
            m.message(2, non_body);
        }
    }
    m
}

/// The fields parameter sub-schemas and `PrimitivesItems` share, from `type` (at `base + 1`) to
/// the vendor extensions (at `base + 18`).
fn primitive_fields(m: &mut Msg, v: &Value, base: u32) {
    m.string(base + 1, v.get("type"));
    m.string(base + 2, v.get("format"));
    m.sub(base + 3, v.get("items"), primitives_items);
    m.string(base + 4, v.get("collectionFormat"));
    m.any(base + 5, v.get("default"));
    m.double(base + 6, v.get("maximum"));
    m.boolean(base + 7, v.get("exclusiveMaximum"));
    m.double(base + 8, v.get("minimum"));
    m.boolean(base + 9, v.get("exclusiveMinimum"));
    m.int64(base + 10, v.get("maxLength"));
    m.int64(base + 11, v.get("minLength"));
    m.string(base + 12, v.get("pattern"));
    m.int64(base + 13, v.get("maxItems"));
    m.int64(base + 14, v.get("minItems"));
    m.boolean(base + 15, v.get("uniqueItems"));
    for e in v
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(base + 16, any(e));
    }
    m.double(base + 17, v.get("multipleOf"));
    m.extensions(base + 18, v);
}

fn primitives_items(v: &Value) -> Msg {
    let mut m = Msg::default();
    primitive_fields(&mut m, v, 0);
    m
}

/// `Responses`: status codes (and `default`) as `NamedResponseValue` (1), extensions (2).
fn responses(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.named(
        1,
        Some(v),
        |k| k == "default" || (k.len() == 3 && k.bytes().all(|b| b.is_ascii_digit())),
        |r| {
            let mut m = Msg::default();
            if r.get("$ref").is_some() {
                m.sub(2, Some(r), json_reference);
            } else {
                m.sub(1, Some(r), response);
            }
            m
        },
    );
    m.extensions(2, v);
    m
}

fn response(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, v.get("description"));
    m.sub(2, v.get("schema"), |s| {
        // SchemaItem: a Schema (1).
        let mut m = Msg::default();
        m.message(1, schema(s));
        m
    });
    m.extensions(5, v);
    m
}

/// `Schema`, fields 1 to 31.
fn schema(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, v.get("$ref"));
    m.string(2, v.get("format"));
    m.string(3, v.get("title"));
    m.string(4, v.get("description"));
    m.any(5, v.get("default"));
    m.double(6, v.get("multipleOf"));
    m.double(7, v.get("maximum"));
    m.boolean(8, v.get("exclusiveMaximum"));
    m.double(9, v.get("minimum"));
    m.boolean(10, v.get("exclusiveMinimum"));
    m.int64(11, v.get("maxLength"));
    m.int64(12, v.get("minLength"));
    m.string(13, v.get("pattern"));
    m.int64(14, v.get("maxItems"));
    m.int64(15, v.get("minItems"));
    m.boolean(16, v.get("uniqueItems"));
    m.int64(17, v.get("maxProperties"));
    m.int64(18, v.get("minProperties"));
    m.strings(19, v.get("required"));
    for e in v
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(20, any(e));
    }
    m.sub(21, v.get("additionalProperties"), |a| {
        // AdditionalPropertiesItem: a Schema (1) or a boolean (2).
        let mut m = Msg::default();
        match a {
            Value::Bool(b) => {
                m.key(2, 0);
                m.varint(u64::from(*b));
            }
            s => m.message(1, schema(s)),
        }
        m
    });
    m.sub(22, v.get("type"), |t| {
        // TypeItem: one string, or several.
        let mut m = Msg::default();
        match t {
            Value::Array(_) => m.strings(1, Some(t)),
            Value::String(s) => m.bytes(1, s.as_bytes()),
            _ => {}
        }
        m
    });
    m.sub(23, v.get("items").filter(|i| i.is_object()), |i| {
        // ItemsItem: repeated Schema (1); gnostic takes a single schema only.
        let mut m = Msg::default();
        m.message(1, schema(i));
        m
    });
    m.repeated(24, v.get("allOf"), schema);
    m.sub(25, v.get("properties"), |p| {
        let mut m = Msg::default();
        m.named(1, Some(p), all, schema);
        m
    });
    m.string(26, v.get("discriminator"));
    m.boolean(27, v.get("readOnly"));
    m.sub(28, v.get("xml"), |x| {
        let mut m = Msg::default();
        m.string(1, x.get("name"));
        m.string(2, x.get("namespace"));
        m.string(3, x.get("prefix"));
        m.boolean(4, x.get("attribute"));
        m.boolean(5, x.get("wrapped"));
        m.extensions(6, x);
        m
    });
    m.sub(29, v.get("externalDocs"), external_docs);
    m.any(30, v.get("example"));
    m.extensions(31, v);
    m
}

/// `SecurityRequirement`: `NamedStringArray`s (1) of `StringArray` (1: repeated string).
fn security_requirement(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.named(1, Some(v), all, |scopes| {
        let mut m = Msg::default();
        m.strings(1, Some(scopes));
        m
    });
    m
}

/// `SecurityDefinitionsItem`: basic (1) or apiKey (2) authentication.
fn security_definition(v: &Value) -> Msg {
    let mut m = Msg::default();
    match v.get("type").and_then(Value::as_str) {
        Some("basic") => {
            let mut b = Msg::default();
            b.string(1, v.get("type"));
            b.string(2, v.get("description"));
            b.extensions(3, v);
            m.message(1, b);
        }
        Some("apiKey") => {
            let mut k = Msg::default();
            k.string(1, v.get("type"));
            k.string(2, v.get("name"));
            k.string(3, v.get("in"));
            k.string(4, v.get("description"));
            k.extensions(5, v);
            m.message(2, k);
        }
        _ => {}
    }
    m
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A decoded field: (number, varint or 64-bit value, or the bytes of a length-delimited one).
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) enum F<'a> {
        Varint(u64),
        Fixed64(u64),
        Bytes(&'a [u8]),
    }

    /// Decodes one message into its fields, in order (panics on malformed input).
    pub(crate) fn fields(b: &[u8]) -> Vec<(u32, F<'_>)> {
        let mut out = Vec::new();
        let mut pos = 0;
        let varint = |pos: &mut usize| {
            let mut v = 0u64;
            for shift in (0..64).step_by(7) {
                let byte = b[*pos];
                *pos += 1;
                v |= u64::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 {
                    return v;
                }
            }
            panic!("varint too long")
        };
        while pos < b.len() {
            let key = varint(&mut pos);
            let field = (key >> 3) as u32;
            let f = match key & 7 {
                0 => F::Varint(varint(&mut pos)),
                1 => {
                    let v = u64::from_le_bytes(b[pos..pos + 8].try_into().unwrap());
                    pos += 8;
                    F::Fixed64(v)
                }
                2 => {
                    let n = varint(&mut pos) as usize;
                    let s = &b[pos..pos + n];
                    pos += n;
                    F::Bytes(s)
                }
                w => panic!("unexpected wire type {w}"),
            };
            out.push((field, f));
        }
        out
    }

    /// The bytes of every occurrence of a length-delimited field.
    pub(crate) fn all_of(b: &[u8], field: u32) -> Vec<&[u8]> {
        fields(b)
            .into_iter()
            .filter_map(|(n, f)| match f {
                F::Bytes(s) if n == field => Some(s),
                _ => None,
            })
            .collect()
    }

    /// The bytes of the one occurrence of a length-delimited field.
    pub(crate) fn one(b: &[u8], field: u32) -> &[u8] {
        let v = all_of(b, field);
        assert_eq!(v.len(), 1, "field {field} in {:?}", fields(b));
        v[0]
    }

    pub(crate) fn text(b: &[u8]) -> &str {
        std::str::from_utf8(b).unwrap()
    }

    /// The value of a `Named*` entry (field 2) whose name (field 1) is `name`, among the
    /// occurrences of `field`.
    pub(crate) fn named<'a>(b: &'a [u8], field: u32, name: &str) -> &'a [u8] {
        all_of(b, field)
            .into_iter()
            .find(|e| text(one(e, 1)) == name)
            .map(|e| one(e, 2))
            .unwrap_or_else(|| panic!("no {name} in field {field}"))
    }

    /// The YAML of a vendor extension, parsed.
    pub(crate) fn extension(b: &[u8], field: u32, name: &str) -> Value {
        let any = named(b, field, name);
        serde_yaml::from_str(text(one(any, 2))).unwrap()
    }

    #[test]
    fn bytes_follow_the_field_numbers() {
        // Document.swagger (1) and Info.title (1) / version (2).
        let doc = json!({"swagger": "2.0", "info": {"title": "T", "version": "v"}});
        assert_eq!(
            document(&doc),
            [
                0x0a, 3, b'2', b'.', b'0', // 1: "2.0"
                0x12, 6, 0x0a, 1, b'T', 0x12, 1, b'v', // 2: Info{1: "T", 2: "v"}
            ]
        );
        // Schema: maximum (7, a double), maxLength (11, varint), uniqueItems (16), type (22,
        // TypeItem{1}), an empty properties (25) is still written; false and "" are left out.
        let s = schema(
            &json!({"maximum": 10, "maxLength": 20, "uniqueItems": true, "type": "object", "properties": {}, "exclusiveMinimum": false, "description": ""}),
        );
        let mut expected = vec![0x39];
        expected.extend_from_slice(&10f64.to_le_bytes());
        expected.extend_from_slice(&[0x58, 20, 0x80, 0x01, 1]);
        expected.extend_from_slice(&[0xb2, 0x01, 8, 0x0a, 6]);
        expected.extend_from_slice(b"object");
        expected.extend_from_slice(&[0xca, 0x01, 0]);
        assert_eq!(s.0, expected);
        // Negative int64s are ten-byte varints; additionalProperties false is Boolean (2).
        let s = schema(&json!({"minLength": -1, "additionalProperties": false}));
        assert_eq!(
            fields(&s.0),
            [(12, F::Varint(u64::MAX)), (21, F::Bytes(&[0x10, 0])),]
        );
    }

    #[test]
    fn round_trip_of_definitions_paths_and_extensions() {
        let doc = json!({
            "swagger": "2.0",
            "paths": {
                "/apis/g/v1/things/{name}": {
                    "parameters": [
                        {"name": "name", "in": "path", "required": true, "type": "string", "uniqueItems": true},
                        {"$ref": "#/parameters/pretty"}
                    ],
                    "patch": {
                        "operationId": "patchGV1Thing",
                        "consumes": ["application/merge-patch+json"],
                        "parameters": [
                            {"name": "body", "in": "body", "required": true, "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}},
                            {"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": true}
                        ],
                        "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/g.v1.Thing"}}, "401": {"description": "Unauthorized"}},
                        "x-kubernetes-action": "patch",
                        "x-kubernetes-group-version-kind": {"group": "g", "kind": "Thing", "version": "v1"}
                    }
                },
                "x-note": "not a path"
            },
            "definitions": {
                "g.v1.Thing": {
                    "type": "object",
                    "required": ["spec"],
                    "properties": {
                        "spec": {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "green"]}}},
                        "tags": {"type": "array", "items": {"type": "string"}}
                    },
                    "x-kubernetes-group-version-kind": [{"group": "g", "kind": "Thing", "version": "v1"}]
                }
            },
            "security": [{"BearerToken": []}],
            "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}}
        });
        let b = document(&doc);
        // Definitions (9) → NamedSchema (1) → Schema.
        let thing = named(one(&b, 9), 1, "g.v1.Thing");
        assert_eq!(
            extension(thing, 31, "x-kubernetes-group-version-kind"),
            json!([{"group": "g", "kind": "Thing", "version": "v1"}])
        );
        assert_eq!(text(one(one(thing, 22), 1)), "object");
        assert_eq!(all_of(thing, 19), [b"spec"]);
        let spec = named(one(thing, 25), 1, "spec");
        let colour = named(one(spec, 25), 1, "colour");
        let enums: Vec<&str> = all_of(colour, 20).iter().map(|a| text(one(a, 2))).collect();
        assert_eq!(enums, ["red\n", "green\n"]);
        let tags = named(one(thing, 25), 1, "tags");
        assert_eq!(text(one(one(one(one(tags, 23), 1), 22), 1)), "string");

        // Paths (8): the x- key is an extension (1), the path a NamedPathItem (2).
        let paths = one(&b, 8);
        assert_eq!(extension(paths, 1, "x-note"), json!("not a path"));
        let item = named(paths, 2, "/apis/g/v1/things/{name}");
        // PathItem.parameters (9): a path parameter (Parameter 1 → NonBodyParameter 2 → path
        // sub-schema 4, whose type is field 5), then a JsonReference (2).
        let params = all_of(item, 9);
        let path_param = one(one(one(params[0], 1), 2), 4);
        assert_eq!(fields(path_param)[0], (1, F::Varint(1)));
        assert_eq!(text(one(path_param, 4)), "name");
        assert_eq!(text(one(path_param, 5)), "string");
        assert_eq!(fields(path_param).last(), Some(&(19, F::Varint(1))));
        assert_eq!(text(one(one(params[1], 2), 1)), "#/parameters/pretty");
        // The patch operation (8): what cli-runtime's v2 field-validation check reads.
        let patch = one(item, 8);
        assert_eq!(text(one(patch, 5)), "patchGV1Thing");
        assert_eq!(
            extension(patch, 13, "x-kubernetes-group-version-kind"),
            json!({"group": "g", "kind": "Thing", "version": "v1"})
        );
        let op_params = all_of(patch, 8);
        let body = one(one(op_params[0], 1), 1);
        assert_eq!(text(one(body, 3)), "body");
        assert_eq!(
            text(one(one(body, 5), 1)),
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
        );
        let query = one(one(one(op_params[1], 1), 2), 3);
        assert_eq!(text(one(query, 4)), "fieldValidation");
        assert_eq!(text(one(query, 6)), "string");
        assert_eq!(fields(query).last(), Some(&(20, F::Varint(1))));
        // Responses (9) → NamedResponseValue (1) → ResponseValue.response (1) → Response.
        let ok = one(named(one(patch, 9), 1, "200"), 1);
        assert_eq!(text(one(ok, 1)), "OK");
        assert_eq!(text(one(one(one(ok, 2), 1), 1)), "#/definitions/g.v1.Thing");

        // Security (12) and its definition (13): apiKey is SecurityDefinitionsItem 2.
        let req = one(&b, 12);
        assert_eq!(text(one(one(req, 1), 1)), "BearerToken");
        let key = one(named(one(&b, 13), 1, "BearerToken"), 2);
        assert_eq!(text(one(key, 2)), "authorization");
        assert_eq!(text(one(key, 3)), "header");
    }
}
