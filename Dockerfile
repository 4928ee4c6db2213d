# Build: docker compose build (not run in this project's CI: no engine here).
# VERSION is stamped into the binary (agentnode version, NIP-11, /metrics):
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) .
FROM golang:1.26-bookworm AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -tags libsecp256k1 -ldflags "-X main.Version=${VERSION}" -o /out/agentnode ./cmd/agentnode

FROM debian:bookworm-slim
# ca-certificates: wss:// peers and HTTPS models and bindings verify TLS;
# curl: the health check.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/agentnode /usr/local/bin/agentnode
# A non-root user owns /data (a new named volume takes this ownership). The
# node writes nothing outside /data, so the root filesystem can be read-only
# (docker run --read-only --tmpfs /tmp; compose: read_only: true).
RUN groupadd --system --gid 10001 agentnode \
 && useradd --system --uid 10001 --gid agentnode --home-dir /data --no-create-home --shell /usr/sbin/nologin agentnode \
 && mkdir -p /data && chown agentnode:agentnode /data && chmod 0700 /data
USER 10001:10001
ENV HOME=/data
VOLUME /data
EXPOSE 7447
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:7447/healthz"]
ENTRYPOINT ["/usr/local/bin/agentnode"]
CMD ["serve", "--listen", "0.0.0.0:7447", "--data", "/data"]
