// cf-sim-gpu-plugin: a SIMULATED GPU device plugin for the lab's GPU servers, which have no GPUs.
//
// It speaks the kubelet's device-plugin API (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1) for real:
// it serves DevicePlugin on a socket in the kubelet's device-plugins directory, registers
// --resource (default nvidia.com/gpu) with the kubelet's Registration service, streams --count
// devices through ListAndWatch and answers Allocate. Only the devices are simulated: there is no NVML
// and no /dev/nvidia*; Allocate hands the container what NVIDIA's plugin hands it in its envvar
// strategy (NVIDIA_VISIBLE_DEVICES with the allocated IDs) plus CLUSTERFORGE_SIMULATED_GPU=1.
// When the kubelet restarts it removes the plugin sockets; the plugin sees its own socket go and
// registers again (the device-plugin restart protocol).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

var idRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

type plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	devices []*pluginapi.Device
	stop    chan struct{}
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, s pluginapi.DevicePlugin_ListAndWatchServer) error {
	if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: p.devices}); err != nil {
		return err
	}
	<-p.stop
	return nil
}

func (p *plugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	known := map[string]bool{}
	for _, d := range p.devices {
		known[d.ID] = true
	}
	out := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		for _, id := range c.DevicesIds {
			if !known[id] {
				return nil, fmt.Errorf("unknown device %q", id)
			}
		}
		log.Printf("allocate %s", strings.Join(c.DevicesIds, ","))
		out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{
				"NVIDIA_VISIBLE_DEVICES":     strings.Join(c.DevicesIds, ","),
				"CLUSTERFORGE_SIMULATED_GPU": "1",
			},
		})
	}
	return out, nil
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

func register(dir, endpoint, resource string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "kubelet.sock"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: endpoint, ResourceName: resource,
		Options: &pluginapi.DevicePluginOptions{},
	})
	return err
}

// serve runs one generation: socket up, registered, until the socket is removed (kubelet restart) or a signal.
func serve(dir, endpoint, resource string, devices []*pluginapi.Device, sig chan os.Signal) bool {
	sock := filepath.Join(dir, endpoint)
	_ = os.Remove(sock)
	lis, err := net.Listen("unix", sock)
	if err != nil {
		log.Printf("listen %s: %v", sock, err)
		return true
	}
	p := &plugin{devices: devices, stop: make(chan struct{})}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go func() { _ = srv.Serve(lis) }()
	defer func() { close(p.stop); srv.Stop(); _ = os.Remove(sock) }()
	if err := register(dir, endpoint, resource); err != nil {
		log.Printf("register with the kubelet: %v (retrying)", err)
		return true
	}
	log.Printf("registered %s: %d SIMULATED devices on %s", resource, len(devices), sock)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case s := <-sig:
			log.Printf("%v: stopping", s)
			return false
		case <-tick.C:
			if _, err := os.Stat(sock); err != nil {
				log.Printf("socket %s gone (kubelet restarted): registering again", sock)
				return true
			}
		}
	}
}

func main() {
	dir := flag.String("dir", pluginapi.DevicePluginPath, "the kubelet's device-plugins directory")
	resource := flag.String("resource", "nvidia.com/gpu", "extended resource name")
	count := flag.Int("count", 0, "number of simulated devices")
	prefix := flag.String("id-prefix", "SIM-GPU", "device ID prefix (a host name keeps IDs unique)")
	flag.Parse()
	if *count < 0 || *count > 1024 || !idRe.MatchString(*prefix) {
		log.Fatalf("--count must be 0..1024 and --id-prefix [A-Za-z0-9._-]{1,63}")
	}
	devices := make([]*pluginapi.Device, 0, *count)
	for i := 0; i < *count; i++ {
		devices = append(devices, &pluginapi.Device{ID: fmt.Sprintf("%s-%d", *prefix, i), Health: pluginapi.Healthy})
	}
	endpoint := "cf-sim-gpu.sock"
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	for serve(*dir, endpoint, *resource, devices, sig) {
		select {
		case <-sig:
			return
		case <-time.After(2 * time.Second):
		}
	}
}
