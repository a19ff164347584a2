// cf-sim-dra-driver: a SIMULATED Dynamic Resource Allocation (DRA) kubelet plugin for the lab's GPU servers,
// which have no GPUs. The k8s_gpu_mode: dra counterpart of cf-sim-gpu-plugin.
//
// It speaks DRA for real through the upstream library k8s.io/dynamic-resource-allocation/kubeletplugin:
// it registers with the kubelet's plugin registry as --driver (default gpu.nvidia.com, the driver name the
// rendered DeviceClasses select), publishes one ResourceSlice for this node with --count devices, and answers
// the kubelet's NodePrepareResources / NodeUnprepareResources calls for the claims the scheduler allocated
// here. Only the devices are simulated: there is no NVML and no /dev/nvidia*. Each device carries the
// attributes the DeviceClass's CEL selector reads (productName) and simulated=true.
//
// What the container sees: Prepare returns one CDI device ID per allocated device
// (clusterforge.io/sim-gpu=<device>), and the plugin writes the matching CDI spec to --cdi-dir: a runtime with
// CDI (containerd >= 1.7 with enable_cdi, CRI-O) injects NVIDIA_VISIBLE_DEVICES=<device> and
// CLUSTERFORGE_SIMULATED_GPU=1. Debian's containerd 1.6 has no CDI and ignores the IDs, so there the container
// sees nothing of its claim; the allocation shows in the ResourceClaim's status (device, pool = node) and in
// this plugin's log ("prepared claim ...").
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"
)

const (
	cdiKind   = "clusterforge.io/sim-gpu"
	maxDevice = 128 // a ResourceSlice holds at most 128 devices
)

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	product      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,63}$`)
)

// simDriver implements kubeletplugin.DRAPlugin for devices that exist only in this process.
type simDriver struct {
	driver, node string
	devices      map[string]bool
}

func (d *simDriver) PrepareResourceClaims(_ context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		out[claim.UID] = d.prepare(claim)
	}
	return out, nil
}

func (d *simDriver) prepare(claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	if claim.Status.Allocation == nil {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)}
	}
	var devices []kubeletplugin.Device
	var names []string
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != d.driver {
			continue
		}
		if r.Pool != d.node || !d.devices[r.Device] {
			return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s: device %s/%s is not one of this node's",
				claim.Namespace, claim.Name, r.Pool, r.Device)}
		}
		devices = append(devices, kubeletplugin.Device{Requests: []string{r.Request}, PoolName: r.Pool,
			DeviceName: r.Device, CDIDeviceIDs: []string{cdiKind + "=" + r.Device}})
		names = append(names, r.Device)
	}
	log.Printf("prepared claim %s/%s (uid %s): SIMULATED devices %s on node %s", claim.Namespace, claim.Name,
		claim.UID, strings.Join(names, ","), d.node)
	return kubeletplugin.PrepareResult{Devices: devices}
}

func (d *simDriver) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	out := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		log.Printf("unprepared claim %s (uid %s)", claim.NamespacedName, claim.UID)
		out[claim.UID] = nil
	}
	return out, nil
}

func (d *simDriver) HandleError(_ context.Context, err error, msg string) {
	log.Printf("%s: %v", msg, err)
}

// cdiSpec is the CDI specification (github.com/cncf-tags/container-device-interface, version 0.6.0) of the
// simulated devices: no device nodes, only the environment NVIDIA's runtime would read.
func cdiSpec(names []string) ([]byte, error) {
	type edits struct {
		Env []string `json:"env"`
	}
	type device struct {
		Name           string `json:"name"`
		ContainerEdits edits  `json:"containerEdits"`
	}
	spec := struct {
		Version string   `json:"cdiVersion"`
		Kind    string   `json:"kind"`
		Devices []device `json:"devices"`
	}{Version: "0.6.0", Kind: cdiKind}
	for _, n := range names {
		spec.Devices = append(spec.Devices, device{Name: n, ContainerEdits: edits{
			Env: []string{"NVIDIA_VISIBLE_DEVICES=" + n, "CLUSTERFORGE_SIMULATED_GPU=1"}}})
	}
	return json.MarshalIndent(spec, "", "  ")
}

func main() {
	driver := flag.String("driver", "gpu.nvidia.com", "DRA driver name (the DeviceClasses' device.driver)")
	node := flag.String("node-name", "", "this node's name (the ResourceSlice's node and pool)")
	count := flag.Int("count", 0, "number of SIMULATED devices")
	productName := flag.String("product", "NVIDIA GPU (SIMULATED)", "the devices' productName attribute")
	kubeconfig := flag.String("kubeconfig", "/etc/kubernetes/kubelet.conf", "kubeconfig with the node's credentials")
	cdiDir := flag.String("cdi-dir", "/var/run/cdi", "where to write the CDI spec of the devices (empty: none)")
	flag.Parse()
	if !dnsSubdomain.MatchString(*driver) || len(*driver) > 63 || !dnsSubdomain.MatchString(*node) ||
		len(*node) > 253 || *count < 0 || *count > maxDevice || !product.MatchString(*productName) {
		log.Fatalf("--driver and --node-name must be DNS subdomains (driver at most 63), --count 0..%d, "+
			"--product [A-Za-z0-9 ._()-]{1,64}", maxDevice)
	}
	log.SetPrefix("cf-sim-dra-driver (SIMULATED GPUs): ")

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig %s: %v", *kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		log.Fatalf("client: %v", err)
	}

	sim := &simDriver{driver: *driver, node: *node, devices: map[string]bool{}}
	devices := make([]resourceapi.Device, 0, *count)
	names := make([]string, 0, *count)
	for i := 0; i < *count; i++ {
		name := fmt.Sprintf("gpu-%d", i)
		sim.devices[name] = true
		names = append(names, name)
		devices = append(devices, resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"productName": {StringValue: productName},
			"index":       {IntValue: ptr.To(int64(i))},
			"uuid":        {StringValue: ptr.To(fmt.Sprintf("SIM-%s-%s", *node, name))},
			"simulated":   {BoolValue: ptr.To(true)},
		}})
	}
	if *cdiDir != "" {
		spec, err := cdiSpec(names)
		if err == nil {
			err = os.MkdirAll(*cdiDir, 0o755)
		}
		if err == nil {
			path := filepath.Join(*cdiDir, "clusterforge.io-sim-gpu.json")
			if err = os.WriteFile(path+".tmp", spec, 0o644); err == nil {
				err = os.Rename(path+".tmp", path)
			}
		}
		if err != nil {
			log.Fatalf("CDI spec: %v", err)
		}
	}

	// the library listens in the kubelet's plugin directory of the driver, which nothing else creates
	for _, dir := range []string{kubeletplugin.KubeletRegistryDir, filepath.Join(kubeletplugin.KubeletPluginsDir, *driver)} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			log.Fatalf("%s: %v", dir, err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	helper, err := kubeletplugin.Start(ctx, sim, kubeletplugin.DriverName(*driver), kubeletplugin.NodeName(*node),
		kubeletplugin.KubeClient(client))
	if err != nil {
		log.Fatalf("start the kubelet plugin: %v", err)
	}
	defer helper.Stop()
	pool := resourceslice.Pool{Slices: []resourceslice.Slice{{Devices: devices}}}
	if err := helper.PublishResources(ctx, resourceslice.DriverResources{
		Pools: map[string]resourceslice.Pool{*node: pool}}); err != nil {
		log.Fatalf("publish the ResourceSlice: %v", err)
	}
	log.Printf("driver %s on node %s: %d SIMULATED devices (%s) published", *driver, *node, *count, *productName)
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		log.Printf("%v", context.Cause(ctx))
	}
	log.Printf("stopping")
}
