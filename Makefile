# jevlab — make targets. `make run` opens the workbench on the shipped
# example offline; `make test` runs every test.

GO        ?= go
BIN       := bin/jevlab
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
PKGS      := ./...
# The race detector is on in tests; CGO is required by go-sqlite3.
export CGO_ENABLED := 1

.PHONY: all build run test test-go tui-smoke bench bench-scale lint fmt clean man

all: build

# -buildvcs=false: the version comes from VERSION above, and VCS stamping
# fails the build when git refuses the checkout (owned by another user, as
# in some CI containers: "error obtaining VCS status").
build:
	$(GO) build -buildvcs=false -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(BIN) ./cmd/jevlab

# Man pages generated from the commands' own help (jevlab man DIR).
man: build
	./$(BIN) man man

run: build
	./$(BIN)

test: lint test-go tui-smoke

test-go:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# The real-terminal check runs when tmux is installed (.ci/run installs it).
tui-smoke: build
	@if command -v tmux >/dev/null 2>&1; then \
		./scripts/tui-smoke.sh $(BIN); \
	else \
		echo "tui-smoke: tmux not installed, skipped"; \
	fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

# The commands measured as processes, end to end (issue: a million-item
# run on a laptop): eval against a separate `jevlab serve --synthetic`,
# then show and compare, at each size in SCALE (add 1000000 for the long run);
# then the evaluate screen's first full frame of a run that size.
SCALE ?= 10000,100000
bench-scale: build
	JEVLAB_SCALE=$(SCALE) JEVLAB_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x -timeout 3h ./cmd/jevlab
	JEVLAB_SCALE=$(SCALE) $(GO) test -run '^$$' -bench '^BenchmarkEvaluateFirstFrame$$' -benchtime 1x -timeout 3h ./tui

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin man
