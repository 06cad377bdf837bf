# syntax=docker/dockerfile:1
#
# baton in a container: build on Debian 12 with the -dev packages, run on a
# slim Debian 12 with only the shared libraries the binary links against
# (checked with ldd: hiredis 0.14, yaml-cpp 0.7, prometheus-cpp core 1.0,
# libsystemd, OpenSSL 3, libstdc++; Boost, CLI11 and nlohmann-json are
# header-only, and spdlog and fmt are compiled into baton), plus ca-certificates: the trust store that
# rediss:// URLs use when no redis.tls_ca_file is given.
#
#   docker build -t baton .
#   docker run --rm -v baton-sock:/run/baton baton \
#       --election my-job --redis-url redis://redis:6379/0
#
# Arguments after the image name go to `baton run`. The socket for the app
# container is /run/baton/baton.sock, in a volume the app container mounts too
# (see docker/compose.yaml and docker/kubernetes/). The process runs as
# uid/gid 10001 (baton): give the app container that uid or gid so that it may
# connect (socket mode 0660).
# Secrets: pass BATON_REDIS_PASSWORD through the environment or a password file
# (--redis-password-file), never as an argument.
#
# Both images are arguments so that a build can use local copies of Debian 12
# (the deploy test builds from an image it makes with debootstrap).

ARG BUILD_IMAGE=debian:bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BUILD_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ cmake make pkg-config ccache \
      libboost-dev libhiredis-dev libspdlog-dev libcli11-dev libyaml-cpp-dev \
      nlohmann-json3-dev prometheus-cpp-dev libsystemd-dev libpq-dev libssl-dev \
      libzookeeper-st-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# .dockerignore lets only the sources through (CMakeLists.txt, cmake/,
# include/, src/ and the Debian changelog that cmake/packaging.cmake reads):
# local build directories must not leak into the build tree.
COPY . ./
# Only the daemon and its keeper (what a standby parks for its next term): the
# tests and benchmarks are not part of the image. The flags are those of
# scripts/build.sh (-O2, line tables, which strip removes; unity batches in
# source order), so the image runs the code the tests ran and the .deb ships.
# The compile goes through ccache with its cache in /ccache. In a plain build
# that cache starts empty and goes away with this stage; a build that mounts a
# compiler cache there (the deploy test mounts the one its own build filled,
# `buildah bud --volume DIR:/ccache`) compiles only what the cache lacks.
ENV CCACHE_DIR=/ccache CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=locale
RUN cmake -S . -B build -G "Unix Makefiles" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DBATON_BUILD_TESTS=OFF -DBATON_UNITY=forward \
 && cmake --build build -j"$(nproc)" --target baton baton-keeper \
 && strip build/baton build/baton-keeper \
 && ./build/baton version

FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libhiredis0.14 libpq5 libzookeeper-st2 libyaml-cpp0.7 libprometheus-cpp-core1.0 \
      libsystemd0 libssl3 ca-certificates libstdc++6 libgcc-s1 \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 baton \
 && useradd --system --uid 10001 --gid baton --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin baton \
 && install -d -o baton -g baton -m 0770 /run/baton
COPY --from=build /src/build/baton /usr/bin/baton
COPY --from=build /src/build/baton-keeper /usr/libexec/baton/baton-keeper
# `baton health` and `baton status` find the daemon through this variable too.
ENV BATON_SOCKET_PATH=/run/baton/baton.sock
# A named volume mounted here starts with this directory's owner and mode.
VOLUME ["/run/baton"]
# HTTP (/healthz, /livez, /readyz, /leader, /standby, /status, /metrics) is off unless
# --http-listen or BATON_HTTP_LISTEN is set, e.g. BATON_HTTP_LISTEN=0.0.0.0:9464.
EXPOSE 9464
USER baton:baton
STOPSIGNAL SIGTERM
# Liveness: exit 0 when the daemon answers on its socket and no leader is
# wedged, leader or standby alike, so a standby is not restarted for being a
# standby, nor every container for a store outage (an orchestrator restarts
# unhealthy containers). `baton health --ready` asks whether the store answers.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["baton", "health"]
ENTRYPOINT ["baton", "run"]
