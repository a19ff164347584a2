// cf-gpu-probe: the workload of the cluster's probe image. It prints the GPUs the container was
// allocated (NVIDIA_VISIBLE_DEVICES, set by the device plugin's Allocate, and the /dev/nvidia* device
// nodes present) and whether they are SIMULATED (CLUSTERFORGE_SIMULATED_GPU, set by the lab's plugin),
// then exits 0 when it was given at least one GPU, 1 otherwise. With --hold it then keeps running until
// SIGTERM (a long-running pod for drain and failover checks).
//
// With --dra the GPU came through a DRA ResourceClaim (k8s_gpu_mode: dra): a runtime with CDI applies the
// driver's edits (the lab's SIMULATED cf-sim-dra-driver sets NVIDIA_VISIBLE_DEVICES and
// CLUSTERFORGE_SIMULATED_GPU); Debian's containerd 1.6 has no CDI, so the container may see nothing. The probe
// then says so and exits 0: the claim's status is the proof of the allocation (verify reads it).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	hold := flag.Bool("hold", false, "keep running until SIGTERM after the report")
	dra := flag.Bool("dra", false, "the GPU came through a DRA claim: seeing none is not a failure (no CDI in the runtime)")
	flag.Parse()
	host, _ := os.Hostname()
	visible := os.Getenv("NVIDIA_VISIBLE_DEVICES")
	nodes, _ := filepath.Glob("/dev/nvidia[0-9]*")
	simulated := os.Getenv("CLUSTERFORGE_SIMULATED_GPU") == "1"
	var ids []string
	for _, id := range strings.Split(visible, ",") {
		if id = strings.TrimSpace(id); id != "" && id != "void" && id != "none" {
			ids = append(ids, id)
		}
	}
	fmt.Printf("cf-gpu-probe: pod %s node %s\n", host, os.Getenv("NODE_NAME"))
	fmt.Printf("cf-gpu-probe: allocated %d GPU(s): %s\n", len(ids), strings.Join(ids, ","))
	fmt.Printf("cf-gpu-probe: device nodes: %s\n", strings.Join(nodes, ","))
	if simulated {
		fmt.Println("cf-gpu-probe: SIMULATED GPUs (the lab's device plugin; no GPU hardware)")
	}
	if len(ids) == 0 && *dra {
		fmt.Println("cf-gpu-probe: DRA: no device visible in the container (the runtime applied no CDI edits;" +
			" containerd 1.6 has none): the ResourceClaim's status names the allocated device")
	} else if len(ids) == 0 {
		fmt.Println("cf-gpu-probe: FAIL: no GPU allocated to this container")
		os.Exit(1)
	}
	fmt.Println("cf-gpu-probe: OK")
	if *hold {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
	}
}
