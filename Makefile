# clusterforge: the two fresh-machine commands are `make up` (main job: the lab stack) and `make test`.
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -euo pipefail -c
ENV := source scripts/env.sh &&

.PHONY: setup up down test lint bench

setup:
	scripts/setup.sh

# Main job: pulumi up on the `lab` stack — the local lab built, provisioned by the roles and verified.
# Its set-up skips what only the tests need and builds the lab's golden images while the engine compiles.
up:
	scripts/setup.sh --up inventory/lab.yaml
	$(ENV) clusterforge up inventory/lab.yaml --stack lab --yes

down:
	$(ENV) clusterforge destroy inventory/lab.yaml --stack lab --yes || true
	$(ENV) clusterforge lab down inventory/lab.yaml

# Every test: unit, property, golden, FRR, Pulumi engine, lab (real hosts), roles; GPU tests skip without a GPU.
# Two pytest workers (pytest-xdist): the shared lab's tests on one, the rest beside them; tests/conftest.py keeps
# each module, and modules that share a lab, an address block or a server, on one worker. CF_TEST_WORKERS=0: one process.
CF_TEST_WORKERS ?= 2
test: setup
	$(ENV) ruff check src tests benchmarks && mypy && pytest -ra --durations=40 -p no:cacheprovider -n $(CF_TEST_WORKERS) --dist loadgroup tests

lint:
	$(ENV) ruff check src tests benchmarks && mypy

# Speed benchmarks, then docs/benchmarks.md written from this one run's records (benchmarks/write_page.py: the
# machine, its load before and after, every figure; printed, never asserted); pyavd is the `bench` extra, installed here.
bench: setup
	$(ENV) pip install -q "pyavd>=6.4"
	export CLUSTERFORGE_BENCH_RESULTS="$(CURDIR)/.state/bench-results"
	$(ENV) python benchmarks/write_page.py start
	$(ENV) python benchmarks/plan_render.py
	$(ENV) python benchmarks/render_switches.py
	$(ENV) python benchmarks/scale_examples.py
	$(ENV) python benchmarks/pyavd_compare.py
	$(ENV) python benchmarks/pyavd_process.py
	$(ENV) python benchmarks/cli_startup.py
	$(ENV) python benchmarks/commands_scale.py
	$(ENV) python benchmarks/write_page.py write
