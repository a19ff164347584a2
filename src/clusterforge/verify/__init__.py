"""Verification: testinfra host checks (``verify.hosts`` run by ``verify.runner``) and the GPU
acceptance benchmarks (``verify.gpu``). Import the subpackages directly; this package imports nothing."""
