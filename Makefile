# The two commands of the README:
#   make run    build the CLI and run the default scenario (summary printed, results in runs/)
#   make test   every test: Rust (engine and CLI) and Python (API)
CARGO ?= cargo
PYTHON ?= python3
SCENARIO ?= scenarios/incast_fat_tree.toml

.PHONY: run test build python rust-test python-test bench tools fuzz repro

run: build
	./target/release/csigsim run $(SCENARIO) --out runs/$(basename $(notdir $(SCENARIO)))

build:
	$(CARGO) build --release -p csigsim-cli

# Builds the native module through maturin (PEP 517) and installs the package with its test extra.
python:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check "./python[test]"

# tshark (Debian) checks pcap captures against the Wireshark dissector, and
# chromium renders the HTML report; their tests skip themselves when they
# cannot be installed (not root, no apt).
tools:
	@command -v tshark >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; } || echo "tshark not installed: the capture tests will be skipped"
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || echo "chromium not installed: the report's browser tests will be skipped"

rust-test: tools
	$(CARGO) test --workspace --exclude csigsim-python

python-test: python tools
	$(PYTHON) -m pytest python/tests -q

# The package first: the CLI's report and plot tests call it.
test: python rust-test python-test

bench: build
	./target/release/csigsim bench

# The source documents' experiments (docs/reproductions.md).
repro: build
	./target/release/csigsim repro

# The fuzz tests with many more cases (FUZZ_CASES per target; see docs/robustness.md).
FUZZ_CASES ?= 200000
fuzz:
	CSIGSIM_FUZZ_CASES=$(FUZZ_CASES) CSIGSIM_FUZZ_SEED=$${CSIGSIM_FUZZ_SEED:-random} $(CARGO) test --release -p csigsim --test fuzz
