# The two commands of the README: `make demo` and `make test`. Both install
# Chromium and the fonts with apt when they are missing (as root).

GO      ?= go
BIN     ?= bin/toolserver
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The commit, with -dirty when the tree has changes; empty outside git.
COMMIT  ?= $(shell c=$$(git rev-parse --short HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c-dirty; })
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# The race detector needs cgo: used when a C compiler is there.
RACE    ?= $(shell command -v gcc >/dev/null 2>&1 && echo -race)
# nginx serves the reverse-proxy tests of the link, postgresql the fleet's
# store, iproute2 (ip netns) the tunnel's test across network namespaces.
TEST_PACKAGES ?= nginx postgresql iproute2

# Linters, pinned, run with `go run` so nothing is installed by hand.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOIMPORTS   ?= $(GO) run golang.org/x/tools/cmd/goimports@v0.52.0
MODULE      := github.com/toolserver/toolserver
# How long each fuzz target runs: briefly in `make test`, long in `make fuzz`.
FUZZTIME    ?= 10s

.PHONY: all build deps demo test vet fuzz bench bench-suite bench-storybook soak clean docker docker-smoke check-go

all: build

check-go:
	@command -v $(GO) >/dev/null || { echo "Go 1.26 or newer is needed: https://go.dev/dl/ (Debian's golang package is too old)"; exit 1; }

build: check-go
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/toolserver

deps:
	@./docker/install-runtime.sh

demo: deps build
	./examples/demo.sh $(BIN)

# gofmt, imports grouped stdlib / modules / ours, go vet, a tidy go.mod,
# staticcheck.
vet: check-go
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || { echo "gofmt: the files above need formatting"; exit 1; }
	@test -z "$$($(GOIMPORTS) -l -local $(MODULE) $$(git ls-files -co --exclude-standard '*.go') | tee /dev/stderr)" || { echo "goimports -local $(MODULE): the files above need their imports grouped"; exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(STATICCHECK) ./...

test: check-go
	@EXTRA_PACKAGES="$(TEST_PACKAGES)" ./docker/install-runtime.sh
	@./scripts/fetch-argent.sh
	@./scripts/fetch-yamlls.sh
	@./scripts/build-storybook.sh
	$(MAKE) vet
	$(GO) test $(RACE) -count=1 ./...
	GO=$(GO) ./scripts/fuzz.sh $(FUZZTIME)

# Every fuzz target for 10 minutes (FUZZTIME=… to change).
fuzz: check-go
	GO=$(GO) ./scripts/fuzz.sh $(if $(filter 10s,$(FUZZTIME)),10m,$(FUZZTIME))

# The fleet's store benchmarks start a PostgreSQL of their own.
bench: check-go
	@EXTRA_PACKAGES=postgresql ./docker/install-runtime.sh
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The 12-flow visual suite beside the same cases in Playwright Test (npm), on
# the same Chromium: SUITE_REPS timed runs of each whole suite
# (bench/suite/README.md). Node and npm run Playwright; Debian packages both.
SUITE_REPS ?= 5
bench-suite: deps build
	@command -v node >/dev/null && command -v npm >/dev/null || EXTRA_PACKAGES="nodejs npm" ./docker/install-runtime.sh
	bench/suite/run.sh $(SUITE_REPS) $(BIN)

# toolserver storybook beside the Storybook test-runner with
# jest-image-snapshot on one static build of 40 stories (bench/storybook).
STORYBOOK_REPS ?= 5
bench-storybook: deps build
	@command -v node >/dev/null && command -v npm >/dev/null && command -v python3 >/dev/null || EXTRA_PACKAGES="nodejs npm python3" ./docker/install-runtime.sh
	bench/storybook/run.sh $(STORYBOOK_REPS) $(BIN)

# The determinism soak: the example flows and the stress pages of
# bench/soak/project, RUNS times in a row; fails on any false diff.
RUNS ?= 100
soak: deps build
	$(GO) run ./bench/soak -runs $(RUNS) -bin $(BIN)

# The image renders with this machine's Chromium version when it has one, so
# baselines made here pass in it. --network host: the build needs no bridge.
CHROMIUM_VERSION ?= $(shell dpkg-query -W -f='$${Version}' chromium-headless-shell 2>/dev/null)
docker:
	docker build --network host -f docker/Dockerfile --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) \
	  --build-arg CHROMIUM_VERSION=$(CHROMIUM_VERSION) -t toolserver:$(VERSION) .

# The image built and smoke-tested from a machine without Docker: installs
# docker.io and debootstrap, starts an engine when none answers, makes the
# base images when no registry gives them (scripts/docker-smoke.sh).
docker-smoke: check-go
	GO=$(GO) ./scripts/docker-smoke.sh

clean:
	rm -rf bin demo-out
