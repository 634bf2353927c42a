# capi.rollout — every entry point. Each target installs what it needs (venvs, the API-server build).
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        ?= .venv
FLOOR_VENV  ?= .venv-floor
DOCS_VENV   ?= .venv-docs
GALAXY_VENV ?= .venv-galaxy
MOLECULE_VENV ?= .venv-molecule
BENCH_VENV  ?= .venv-bench
BENCH_ARGS  ?=
PY          := $(VENV)/bin/python
FLEET       ?= tests/fleets/demo.yml
SIM_STATE   ?= .sim
export PYTHONPATH := $(CURDIR)/tests/sim
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
# Python keeps the bytecode of what it imports (scripts/venv.sh installs without it): a caller's
# PYTHONDONTWRITEBYTECODE, as container images often set, would make every process compile every file again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help system-deps venv venv-floor venv-docs venv-galaxy venv-molecule kube collection-link sanity sanity-floor \
        units units-floor typecheck lint docs docs-lint galaxy-import ee-check conformance molecule integration test checks-current \
        checks-floor demo sim-up sim-down sim-status clean venv-bench bench bench-smoke

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

venv: ## controller venv (Python >= 3.12, ansible-core 2.21.x) from requirements/controller.txt
	@scripts/venv.sh $(VENV) requirements/controller.txt 3.13 3.12

venv-floor: ## floor venv (Python 3.11, ansible-core 2.16.x) from requirements/floor.txt
	@scripts/venv.sh $(FLOOR_VENV) requirements/floor.txt 3.11

venv-docs: ## docs venv (antsibull-docs, Sphinx) from requirements/docs.txt
	@scripts/venv.sh $(DOCS_VENV) requirements/docs.txt 3.13 3.12

venv-galaxy: ## packaging venv (galaxy-importer, ansible-builder) from requirements/galaxy.txt
	@scripts/venv.sh $(GALAXY_VENV) requirements/galaxy.txt 3.13 3.12
venv-molecule: ## Molecule venv (molecule + the same ansible-core and kubernetes pins) from requirements/molecule.txt
	@scripts/venv.sh $(MOLECULE_VENV) requirements/molecule.txt 3.13 3.12

venv-bench: ## benchmark venv: kubernetes.core from the PyPI ansible package, same ansible-core and kubernetes pins (requirements/bench.txt)
	@scripts/venv.sh $(BENCH_VENV) requirements/bench.txt 3.13 3.12

system-deps: ## Debian packages the tests need (shellcheck, etcd)
	@scripts/system-deps.sh

# After system-deps: both install Debian packages, and apt-get takes dpkg's lock (make -j would race for it).
kube: system-deps ## build (or reuse) kube-apiserver, kube-controller-manager and kubectl v1.20.2 from Debian sources
	@scripts/build-kube.sh >/dev/null

collection-link: ## make capi.rollout.* resolvable for .venv/bin/ansible-playbook run from the repo root
	@mkdir -p .build/ansible_collections/capi && ln -sfn ../../.. .build/ansible_collections/capi/rollout

sanity: venv system-deps ## ansible-test sanity (ansible-core 2.21, offline, --venv)
	scripts/ansible-test.sh $(VENV) sanity

sanity-floor: venv-floor system-deps ## ansible-test sanity on the declared floor (ansible-core 2.16, Python 3.11)
	scripts/ansible-test.sh $(FLOOR_VENV) sanity

units: venv ## unit tests of the pure core and client helpers
	scripts/ansible-test.sh $(VENV) units

units-floor: venv-floor ## the same unit tests on the floor
	scripts/ansible-test.sh $(FLOOR_VENV) units

typecheck: venv collection-link ## mypy over the boundary types (the run, the verb interface, the plan, the wait state): files in mypy.ini
	$(VENV)/bin/mypy --config-file mypy.ini

lint: venv collection-link ## ansible-lint, production profile
	$(VENV)/bin/ansible-lint --offline --profile production

docs: venv-docs collection-link ## render module, filter and role docs with antsibull-docs + Sphinx into .build/docs (warnings are errors)
	scripts/docs.sh $(DOCS_VENV)

docs-lint: venv-docs collection-link ## antsibull-docs lint-collection-docs --plugin-docs (collection docs lint)
	cd .build/ansible_collections/capi/rollout && PATH=$(CURDIR)/$(DOCS_VENV)/bin:$$PATH \
	  $(CURDIR)/$(DOCS_VENV)/bin/antsibull-docs lint-collection-docs --plugin-docs .

galaxy-import: venv venv-galaxy ## build the tarball and import it with galaxy-importer (no containers); fails on any warning
	scripts/galaxy-import.sh $(VENV) $(GALAXY_VENV)

ee-check: venv venv-galaxy ## ansible-builder create + introspect of the execution environment (also part of conformance)
	$(PY) -m pytest tests/conformance/test_execution_environment.py -q

conformance: venv venv-galaxy system-deps kube collection-link ## simulator conformance + interop tests against real API servers
	$(PY) -m pytest tests/conformance -q --durations=10

# Each scenario starts its own small fleet (tests/fleets/molecule.yml) in create and stops it in destroy, which
# molecule runs also after a failure; the `capisim down` afterwards stops whatever a killed molecule left.
molecule: venv-molecule system-deps kube collection-link ## Molecule scenarios of the roles hardware_refresh and rollout_report (delegated driver, simulated fleet)
	@status=0; for s in hardware_refresh rollout_report; do \
	  PATH="$(CURDIR)/$(MOLECULE_VENV)/bin:$$PATH" $(MOLECULE_VENV)/bin/molecule test -s $$s --destroy=always || { status=$$?; break; }; \
	done; \
	for s in hardware_refresh rollout_report; do \
	  [ ! -f .sim/molecule-$$s/fleet.json ] || $(MOLECULE_VENV)/bin/python -m capisim down --state .sim/molecule-$$s >/dev/null 2>&1 || true; \
	done; exit $$status

# The fleet tests run thousands of modules; tests/ansiballz_cache keeps the bytecode AnsiballZ's zipimport compiles
# for each of them and the payloads ansible-playbook builds for them (its docstring says how). Not for `make bench`,
# whose figures compare with kubernetes.core's runs.
integration conformance molecule: export PYTHONPATH := $(CURDIR)/tests/sim:$(CURDIR)/tests/ansiballz_cache
integration conformance molecule: export CAPI_ROLLOUT_BYTECODE_CACHE := $(CURDIR)/.build/bytecode-cache
integration conformance molecule: export CAPI_ROLLOUT_PAYLOAD_CACHE := $(CURDIR)/.build/payload-cache

integration: venv venv-bench system-deps kube collection-link ## modules, roles and playbooks against simulated fleets
	$(PY) -m pytest tests/integration -q -n 3 --dist loadgroup --durations=30

# Two cores: everything CI runs, in streams where the parts are independent. The static checks of the current
# ansible-core and of the floor use different venvs and ansible-test copies, so they run side by side (they keep both
# cores busy). Conformance, Molecule and integration start fleets of their own and mostly wait for them, so they run
# side by side too (docs/testing.md has the figures). -O keeps each part's output together.
test: ## everything CI runs; the times of its three steps (setup, static checks and units, fleets) go to the log
	@date -u +'== %T make test: setup'
	$(MAKE) -j4 -O venv venv-floor venv-docs venv-galaxy venv-molecule venv-bench system-deps kube collection-link
	@date -u +'== %T make test: static checks and units'
	$(MAKE) -j2 -O checks-current checks-floor
	@date -u +'== %T make test: integration, conformance and Molecule'
	$(MAKE) -j3 -O integration conformance molecule
	@date -u +'== %T make test: done'

checks-current: ## sanity, units, typecheck and lint on the current ansible-core, one after another (part of test)
	$(MAKE) sanity
	$(MAKE) units
	$(MAKE) typecheck
	$(MAKE) lint

checks-floor: ## sanity and units on the floor, then the docs lint and the Galaxy import, one after another (part of test)
	$(MAKE) sanity-floor
	$(MAKE) units-floor
	$(MAKE) docs-lint
	$(MAKE) galaxy-import

# Not part of `make test` (tests/integration/test_bench_smoke.py runs the smoke sizes there). Takes long and wants an
# otherwise idle machine; BENCH_ARGS narrows it, e.g. BENCH_ARGS="--plan 1x10,1x60 --refresh '' --reps 1".
bench: venv venv-bench system-deps kube collection-link ## benchmark matrix vs kubernetes.core/kubectl; rewrites the tables of docs/performance.md
	$(PY) tests/bench/bench.py --bench-venv $(BENCH_VENV) --docs docs/performance.md $(BENCH_ARGS)

bench-smoke: venv venv-bench system-deps kube collection-link ## the benchmark at its smallest sizes, once (tables in .build/bench/tables.md)
	$(PY) tests/bench/bench.py --smoke --bench-venv $(BENCH_VENV) $(BENCH_ARGS)

sim-up: venv kube collection-link ## start a simulated fleet: make sim-up FLEET=tests/fleets/demo.yml SIM_STATE=.sim
	$(PY) -m capisim up --fleet $(FLEET) --state $(SIM_STATE)

sim-down: venv ## stop exactly the processes sim-up started
	$(PY) -m capisim down --state $(SIM_STATE)

sim-status: venv ## MachineDeployments per management cluster
	$(PY) -m capisim status --state $(SIM_STATE)

demo: sim-up ## bring up the demo fleet, print the check-mode plan, refresh the whole fleet, print where the report is
	scripts/demo.sh $(VENV) $(SIM_STATE)

clean: ## stop any fleet and remove build output (the API-server cache in ~/.cache stays)
	-[ -d $(SIM_STATE) ] && $(PY) -m capisim down --state $(SIM_STATE)
	rm -rf .build tests/output $(SIM_STATE) .pytest_cache
