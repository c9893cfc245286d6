# Builds Monarch's executables on the Swift toolchain image and runs them on plain Debian.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libuv1-dev libsqlite3-dev libcurl4-openssl-dev libhiredis-dev pkg-config && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN swift build -c release --static-swift-stdlib --product monarch \
 && swift build -c release --static-swift-stdlib --product monarch-bundle-worker \
 && swift build -c release --static-swift-stdlib --product monarch-cache-worker \
 && swift build -c release --static-swift-stdlib --product monarch-network-worker \
 && mkdir -p /out && cp "$(swift build -c release --show-bin-path)"/monarch* /out/

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libuv1 libsqlite3-0 libcurl4 libhiredis0.14 ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /usr/local/bin/
COPY Examples/Bundle /srv/monarch/Bundle
COPY Examples/compose /srv/monarch/compose
