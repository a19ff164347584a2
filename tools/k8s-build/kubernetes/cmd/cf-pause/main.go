// cf-pause: the pod sandbox ("pause") process of the cluster's own sandbox image.
//
// It holds the pod's namespaces: it sleeps until SIGINT or SIGTERM and, as PID 1 of a pod that
// shares its process namespace, reaps the orphans re-parented to it (SIGCHLD).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
