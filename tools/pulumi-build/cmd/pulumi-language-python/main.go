// Command pulumi-language-python is clusterforge's minimal Pulumi language host
// for Python programs.
//
// Why it exists: the upstream host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3), which
// the Go module proxy reachable from our machines does not serve, and no other
// reachable registry ships the binary. This host implements just what a local
// `pulumi up/preview/destroy` of a Python program needs:
//
//   - Run: starts `python -u pulumi-language-python-exec ...` (the runner
//     script shipped inside the github.com/pulumi/pulumi/sdk/v3 module, copied
//     next to this binary by scripts/setup-pulumi.sh) and reports its exit.
//   - GetRequiredPlugins/GetRequiredPackages: none (clusterforge uses only
//     Python dynamic providers, which are served by the bundled
//     pulumi-resource-pulumi-python launcher, so nothing is ever downloaded).
//   - InstallDependencies: a no-op; the project's .venv is managed by the repo.
//
// Python selection, first match wins:
//  1. runtime option `virtualenv` in Pulumi.yaml (relative to the project root),
//  2. $PULUMI_PYTHON_CMD,
//  3. the repository's .venv (../../.venv relative to this binary),
//  4. `python3` from $PATH.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// Exit code the runner script uses after it has already shown the user an
// actionable error; the engine should then not print a second error.
const exitCodeUserActionableMessage = 32

const execScriptName = "pulumi-language-python-exec"

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	tracing       string
	exeDir        string
}

func main() {
	fs := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	// Flags the engine or older CLIs may pass; accepted so they never break us.
	tracing := fs.String("tracing", "", "Zipkin-compatible tracing endpoint")
	_ = fs.String("virtualenv", "", "ignored; use the runtime option in Pulumi.yaml")
	_ = fs.String("toolchain", "", "ignored")
	_ = fs.String("typechecker", "", "ignored")
	_ = fs.String("root", "", "ignored")
	_ = fs.Bool("logtostderr", false, "ignored")
	_ = fs.Bool("logflow", false, "ignored")
	_ = fs.Int("v", 0, "ignored")
	if err := fs.Parse(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: %v\n", err)
		os.Exit(2)
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "pulumi-language-python: missing required engine RPC address argument")
		os.Exit(2)
	}

	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: locating own executable: %v\n", err)
		os.Exit(1)
	}

	h := &host{engineAddress: fs.Arg(0), tracing: *tracing, exeDir: filepath.Dir(exe)}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: could not start gRPC server: %v\n", err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: gRPC server stopped: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) Handshake(_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) InstallDependencies(_ *pulumirpc.InstallDependenciesRequest,
	_ grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	// Dependencies live in the repository's .venv (see scripts/env.sh).
	return nil
}

func (h *host) RuntimeOptionsPrompts(context.Context, *pulumirpc.RuntimeOptionsRequest,
) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}

func (h *host) GetProgramDependencies(context.Context, *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

func (h *host) About(_ context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	python := h.python(req.GetInfo())
	out, err := exec.Command(python, "--version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("running %s --version: %w", python, err)
	}
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Python "))
	return &pulumirpc.AboutResponse{Executable: python, Version: v}, nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

// python returns the interpreter to run the program with (see package doc).
func (h *host) python(info *pulumirpc.ProgramInfo) string {
	if venv := stringOption(info, "virtualenv"); venv != "" {
		if !filepath.IsAbs(venv) {
			venv = filepath.Join(info.GetRootDirectory(), venv)
		}
		return filepath.Join(venv, "bin", "python")
	}
	if cmd := os.Getenv("PULUMI_PYTHON_CMD"); cmd != "" {
		return cmd
	}
	repoVenv := filepath.Join(h.exeDir, "..", "..", ".venv", "bin", "python")
	if _, err := os.Stat(repoVenv); err == nil {
		return filepath.Clean(repoVenv)
	}
	return "python3"
}

func stringOption(info *pulumirpc.ProgramInfo, key string) string {
	if info == nil || info.GetOptions() == nil {
		return ""
	}
	v, ok := info.GetOptions().GetFields()[key]
	if !ok {
		return ""
	}
	if s, ok := v.GetKind().(*structpb.Value_StringValue); ok {
		return s.StringValue
	}
	return ""
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	script := filepath.Join(h.exeDir, execScriptName)
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%s not found next to the language host (run scripts/setup-pulumi.sh): %w",
			execScriptName, err)
	}

	program := req.GetProgram()
	if info := req.GetInfo(); info != nil && info.GetProgramDirectory() != "" {
		program = filepath.Join(info.GetProgramDirectory(), info.GetEntryPoint())
	}
	if program == "" {
		program = "."
	}

	args := []string{"-u", script,
		"--monitor", req.GetMonitorAddress(),
		"--engine", h.engineAddress,
		"--project", req.GetProject(),
		"--stack", req.GetStack(),
		"--pwd", req.GetPwd(),
		"--dry_run", strconv.FormatBool(req.GetDryRun()),
		"--parallel", strconv.Itoa(int(req.GetParallel())),
	}
	if req.GetOrganization() != "" {
		args = append(args, "--organization", req.GetOrganization())
	}
	if root := req.GetInfo().GetRootDirectory(); root != "" {
		args = append(args, "--root_directory", root)
	}
	if h.tracing != "" {
		args = append(args, "--tracing", h.tracing)
	}
	args = append(args, program)
	args = append(args, req.GetArgs()...)

	configMap := req.GetConfig()
	if configMap == nil {
		configMap = map[string]string{} // the runner expects a JSON object, never null
	}
	config, err := json.Marshal(configMap)
	if err != nil {
		return nil, fmt.Errorf("encoding config: %w", err)
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secrets, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, fmt.Errorf("encoding secret config keys: %w", err)
	}

	python := h.python(req.GetInfo())
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(),
		"PULUMI_CONFIG="+string(config),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secrets),
		"PYTHONUNBUFFERED=1",
	)
	if venvBin := filepath.Dir(python); filepath.IsAbs(python) {
		// Let the program (and tools it spawns) see the venv first on PATH.
		cmd.Env = append(cmd.Env, "PATH="+venvBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}

	err = cmd.Run()
	if err == nil {
		return &pulumirpc.RunResponse{}, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if status, ok := exitErr.Sys().(syscall.WaitStatus); ok {
			switch {
			case status.Exited() && status.ExitStatus() == exitCodeUserActionableMessage:
				return &pulumirpc.RunResponse{Bail: true}, nil
			case status.Exited():
				return &pulumirpc.RunResponse{
					Error: fmt.Sprintf("Program exited with non-zero exit code: %d", status.ExitStatus()),
				}, nil
			case status.Signaled():
				return &pulumirpc.RunResponse{
					Error: fmt.Sprintf("Program exited due to a signal: %v", status.Signal()),
				}, nil
			}
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited unexpectedly: %v", exitErr)}, nil
	}
	return &pulumirpc.RunResponse{Error: fmt.Sprintf("Problem executing program (could not run %s): %v",
		python, err)}, nil
}
