# The agenteval CLI as a container image: a static binary (no cgo; the
# SQLite store is pure Go) on distroless/static, run as a non-root user.
#
#   docker build -t agenteval --build-arg VERSION=v1.2.3 .
#   docker run --rm -v "$PWD:/work" -u "$(id -u):$(id -g)" agenteval run evals/
#
# /work is the working directory: mount your project there. The -u keeps
# the results and the run store (.agenteval/) owned by you; without it the
# image's user (nonroot, uid 65532) must be able to write the folder.
# API keys come in with -e OPENAI_API_KEY and the like.

# GO_VERSION follows go.mod's go line (.ci/run checks that they agree).
ARG GO_VERSION=1.26.8

# The build runs on the builder's own platform and cross-compiles, so a
# multi-platform build (--platform linux/amd64,linux/arm64) needs no
# emulation.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
# The flags of .goreleaser.yaml: static, no paths of the build machine, no
# symbol table or DWARF, the version stamped in.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/agenteval ./cmd/agenteval

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/agenteval /usr/local/bin/agenteval
WORKDIR /work
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/agenteval"]
CMD ["--help"]
