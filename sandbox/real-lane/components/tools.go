//go:build tools

// Package tools records the upstream commands this module builds, so `go mod tidy` keeps their
// requirements: kube-apiserver and kube-controller-manager from k8s.io/kubernetes.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
