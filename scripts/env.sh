# shellcheck shell=bash
# Source me: `. scripts/env.sh` — puts the repo's Pulumi engine (tools/bin,
# built by scripts/setup-pulumi.sh) and the project venv first on PATH and
# keeps Pulumi fully offline (no update checks, no plugin downloads: its
# plugin cache lives in the repo under .state/, and the only plugins used are
# the ones in tools/bin).
_cf_root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]:-$0}")/.." && pwd -P)"
case ":${PATH}:" in
    *":${_cf_root}/tools/bin:${_cf_root}/.venv/bin:"*) ;;
    *) export PATH="${_cf_root}/tools/bin:${_cf_root}/.venv/bin:${PATH}" ;;
esac
export PULUMI_HOME="${_cf_root}/.state/pulumi-home"
export PULUMI_SKIP_UPDATE_CHECK=true
# Never try to install a missing plugin (there is no internet); the plugins we
# use (language host python, resource pulumi-python) sit next to tools/bin/pulumi.
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
mkdir -p "${PULUMI_HOME}"
unset _cf_root
