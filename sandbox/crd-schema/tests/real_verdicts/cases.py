#!/usr/bin/env python3
"""Writes the hand-made fixture CRDs (crds/case-*.yaml): limits, cardinalities and messages.

The probe CRDs (crds/probe-*.yaml) are written by the `write_probe_fixtures` test from
probes.yaml. Rerun: python3 cases.py (needs PyYAML)."""
import os
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
GROUP = "cost.example.com"


def crd(name, spec, spec_rules=None, root_rules=None, root_extra=None):
    plural = name.replace("-", "")
    spec = dict(spec)
    if spec_rules:
        spec["x-kubernetes-validations"] = [
            r if isinstance(r, dict) else {"rule": r} for r in spec_rules
        ]
    root = {"type": "object", "properties": {"spec": spec}}
    if root_rules:
        root["x-kubernetes-validations"] = [{"rule": r} for r in root_rules]
    if root_extra:
        root["properties"].update(root_extra)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural, "kind": "K" + plural,
                      "listKind": "K" + plural + "List"},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": root}}],
        },
    }


def obj(props, **kw):
    d = {"type": "object", "properties": props}
    d.update(kw)
    return d


def arr(items, **kw):
    d = {"type": "array", "items": items}
    d.update(kw)
    return d


def s(**kw):
    d = {"type": "string"}
    d.update(kw)
    return d


R16 = "^[a-z0-9.-]{1,9}$"  # 17 characters: 5 cost units as a regex
assert len(R16) == 17
R8 = "^[a-z]+$"
R34 = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def matches_list(n, length=250, regex=R16):
    """A list of n strings of at most `length` whose items must match `regex`."""
    return arr(s(maxLength=length, **{"x-kubernetes-validations": [
        {"rule": f"self.matches('{regex}')"}]}), maxItems=n)


CASES = {
    # An all() over an unbounded list of unbounded strings with matches: far over budget.
    "matches-unbounded": crd("matches-unbounded", obj({"items": arr(s())}),
                             [f"self.items.all(x, x.matches('{R8}'))"]),
    # The same rule with bounds: accepted.
    "matches-bounded": crd("matches-bounded", obj({"items": arr(s(maxLength=64), maxItems=10)}),
                           [f"self.items.all(x, x.matches('{R8}'))"]),
    # Per-rule limit around 10,000,000 (rule on the items: cardinality = maxItems).
    "limit-just-under": crd("limit-just-under", obj({"list": matches_list(19762)})),
    "limit-just-over": crd("limit-just-over", obj({"list": matches_list(19763)})),
    "limit-twice": crd("limit-twice", obj({"list": matches_list(40000)})),
    # Cardinality through nested lists: 1000 * 100 items.
    "nested-lists-over": crd("nested-lists-over", obj({"outer": arr(arr(s(maxLength=100, **{
        "x-kubernetes-validations": [{"rule": f"self.matches('{R34}')"}]}), maxItems=100),
        maxItems=1000)})),
    "nested-lists-under": crd("nested-lists-under", obj({"outer": arr(arr(s(maxLength=100, **{
        "x-kubernetes-validations": [{"rule": f"self.matches('{R34}')"}]}), maxItems=100),
        maxItems=100)})),
    # An unbounded inner list: the rule's own cardinality (3 MiB / smallest string).
    "nested-inner-unbounded": crd("nested-inner-unbounded", obj({"outer": arr(arr(s(
        maxLength=100, **{"x-kubernetes-validations": [{"rule": f"self.matches('{R34}')"}]})),
        maxItems=10)})),
    # Maps: cardinality from maxProperties, unbounded maps from 3 MiB / (value + 6).
    "map-values-unbounded": crd("map-values-unbounded", obj({"labels": obj({}, additionalProperties=s())}),
                                [f"self.labels.all(k, self.labels[k].matches('{R8}'))"]),
    "map-keys-unbounded": crd("map-keys-unbounded", obj({"labels": obj({}, additionalProperties=s())}),
                              [f"self.labels.all(k, k.matches('{R8}'))"]),
    "map-bounded": crd("map-bounded", obj({"labels": obj({}, additionalProperties=s(maxLength=63),
                                                          maxProperties=16)}),
                       [f"self.labels.all(k, self.labels[k].matches('{R8}'))"]),
    "map-cardinality": crd("map-cardinality", obj({"m": obj({}, maxProperties=20000, additionalProperties=obj(
        {"v": s(maxLength=250)}, **{"x-kubernetes-validations": [
            {"rule": f"!has(self.v) || self.v.matches('{R16}')"}]}))})),
    # The CRD total: eleven rules of distinct costs under the per-rule limit, adding up to more
    # than 100,000,000; the four most expensive are named.
    "total-over": crd("total-over", obj({f"p{i:02d}": matches_list(19000 - 100 * i) for i in range(11)})),
    # The 1% filter: two expensive rules and a cheap one (under 1,000,000: not named).
    "total-one-percent": crd("total-one-percent", obj({
        "a": matches_list(117648), "b": matches_list(88236), "c": matches_list(1000)})),
    # messageExpression: priced once (no cardinality), with its own message.
    "message-expression": crd("message-expression", obj({"items": arr(s(maxLength=64), maxItems=10)}),
                              [{"rule": "size(self.items) < 5",
                                "messageExpression": f"self.items.filter(x, x.matches('{R8}')).join(', ') + string(size(self.items))"}]),
    "message-expression-unbounded": crd("message-expression-unbounded", obj({"items": arr(s())}),
                                        [{"rule": "size(self.items) < 5",
                                          "messageExpression": f"'bad: ' + self.items.filter(x, x.matches('{R8}')).join(', ')"}]),
    # Root rules: apiVersion/kind are unbounded strings, metadata.name at most 253 characters.
    "root-kind": crd("root-kind", obj({}), root_rules=["self.kind.matches('" + "[a-z]" * 32 + "')"]),
    "root-metadata-name": crd("root-metadata-name", obj({"items": arr(s(maxLength=250), maxItems=400)}),
                              root_rules=["self.spec.items.all(x, x.matches(self.metadata.name))"]),
    "root-metadata-generate-name": crd("root-metadata-generate-name", obj({"items": arr(s(maxLength=250), maxItems=400)}),
                                       root_rules=["self.spec.items.all(x, x.matches(self.metadata.generateName))"]),
    # kube-apiserver 1.37 has no check that an int64 field's bounds fit in int64.
    "int64-bounds-beyond": crd("int64-bounds-beyond", obj({"priority": {
        "type": "integer", "format": "int64", "minimum": -1.0e19, "maximum": 9.223372036854776e18}})),
    # Several errors on one node: in rule order, per rule its cost, then its messageExpression
    # (compared in order, see real_verdicts.rs), after the errors of the node's subtree.
    "order-one-node": crd("order-one-node", obj({
        "items": arr(s()), "sub": obj({"l": arr(s())}, **{"x-kubernetes-validations": [
            {"rule": f"self.l.all(x, x.matches('{R8}'))"}]})}),
        ["size(self.items) < 100",
         f"self.items.all(x, x.matches('{R8}'))",
         {"rule": f"self.items.exists(x, x.matches('{R16}'))",
          "messageExpression": f"'bad: ' + self.items.filter(x, x.matches('{R8}')).join(', ')"}]),
    # Embedded resources declare metadata.name (at most 253 characters) like the root.
    "embedded-resource": crd("embedded-resource", obj({"list": arr({
        "type": "object", "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": [{"rule": f"self.metadata.name.matches('{R8}')"}]},
        maxItems=58000)})),
    # A root that declares kind, apiVersion and metadata.name/generateName keeps its own
    # (here unbounded) name.
    "root-declared-meta": crd("root-declared-meta", obj({}),
                              root_rules=["self.metadata.name.matches('" + "[a-z]" * 32 + "')"],
                              root_extra={"kind": s(), "apiVersion": s(), "metadata": obj(
                                  {"name": s(), "generateName": s()})}),
    # The smallest serialization of list items (required fields without defaults) bounds an
    # unbounded list: here {"name":"","id":0} (19 bytes).
    "required-min-size": crd("required-min-size", obj({"l": arr(obj(
        {"name": s(maxLength=10), "id": {"type": "integer"}}, required=["name", "id"],
        **{"x-kubernetes-validations": [{"rule": "self.name.matches('" + "[a-z]" * 12 + "')"}]}))})),
    "required-with-default": crd("required-with-default", obj({"l": arr(obj(
        {"name": s(maxLength=10), "id": {"type": "integer", "default": 1}}, required=["name", "id"],
        **{"x-kubernetes-validations": [{"rule": "self.name.matches('" + "[a-z]" * 12 + "')"}]}))})),
    # Transition rule on a list of strings and object equality.
    "old-self-list": crd("old-self-list", obj({"items": arr(s())}),
                         ["!has(oldSelf.items) || self.items == oldSelf.items"]),
}

if __name__ == "__main__":
    out = os.path.join(HERE, "crds")
    os.makedirs(out, exist_ok=True)
    for name, c in CASES.items():
        with open(os.path.join(out, f"case-{name}.yaml"), "w") as f:
            yaml.safe_dump(c, f, sort_keys=False)
