#!/usr/bin/env python3
"""Records a real kube-apiserver's verdict on every crds/*.yaml into verdicts.json.

Each CRD is POSTed with dryRun=All (nothing is created); the verdict is the list of
`field: message` causes of the returned Status (empty when accepted).
Usage: python3 record.py <kubeconfig>   (PyYAML; client certificates given as files or data)."""
import base64
import json
import os
import ssl
import sys
import tempfile
import urllib.error
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


def tls(kubeconfig):
    cfg = yaml.safe_load(open(kubeconfig))
    ctx_name = cfg["current-context"]
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == ctx_name)
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])

    def path(obj, key):
        if key in obj:
            return obj[key]
        f = tempfile.NamedTemporaryFile(delete=False)
        f.write(base64.b64decode(obj[key + "-data"]))
        f.close()
        return f.name

    sc = ssl.create_default_context(cafile=path(cluster, "certificate-authority"))
    sc.load_cert_chain(path(user, "client-certificate"), path(user, "client-key"))
    return cluster["server"], sc


def verdict(server, sc, crd):
    req = urllib.request.Request(
        server + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All",
        data=json.dumps(crd).encode(), method="POST",
        headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, context=sc).read()
        return []
    except urllib.error.HTTPError as e:
        status = json.loads(e.read())
        causes = (status.get("details") or {}).get("causes") or []
        if not causes:
            return [": " + status.get("message", "")]
        return [f"{c.get('field', '')}: {c.get('message', '')}" for c in causes]


def main():
    server, sc = tls(sys.argv[1])
    out = {}
    crds = os.path.join(HERE, "crds")
    for name in sorted(os.listdir(crds)):
        if name.endswith(".yaml"):
            out[name] = verdict(server, sc, yaml.safe_load(open(os.path.join(crds, name))))
    with open(os.path.join(HERE, "verdicts.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(out)} verdicts, {sum(1 for v in out.values() if v)} refused")


if __name__ == "__main__":
    main()
