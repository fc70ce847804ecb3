// Command etcd runs the upstream etcd server (go.etcd.io/etcd/server/v3/etcdmain), exactly as
// etcd's own main package does; the pinned version is in ../go.mod.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
