# Build: docker compose build (not run in this project's CI: no engine here).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -tags libsecp256k1 -o /out/agentnode ./cmd/agentnode

FROM debian:bookworm-slim
COPY --from=build /out/agentnode /usr/local/bin/agentnode
VOLUME /data
EXPOSE 7447
ENTRYPOINT ["/usr/local/bin/agentnode"]
CMD ["serve", "--listen", "0.0.0.0:7447", "--data", "/data"]
