// Command cf-dns-probe resolves each NAME[=ADDRESS] argument through the pod's /etc/resolv.conf (the kubelet's
// clusterDNS, search path and ndots) with Go's own resolver, prints what each gave, and exits 0 only when every
// name resolved (to ADDRESS, where one is given). `verify` and the tests run it from the CoreDNS image.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cf-dns-probe NAME[=ADDRESS]...")
		os.Exit(2)
	}
	resolver := &net.Resolver{PreferGo: true}
	failed := false
	for _, arg := range os.Args[1:] {
		name, want, _ := strings.Cut(arg, "=")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		addrs, err := resolver.LookupHost(ctx, name)
		cancel()
		switch {
		case err != nil:
			fmt.Printf("cf-dns-probe: %s: %v\n", name, err)
			failed = true
		case want != "" && !slices.Contains(addrs, want):
			fmt.Printf("cf-dns-probe: %s resolved to %s, not %s\n", name, strings.Join(addrs, " "), want)
			failed = true
		default:
			fmt.Printf("cf-dns-probe: %s resolved to %s\n", name, strings.Join(addrs, " "))
		}
	}
	if failed {
		os.Exit(1)
	}
}
