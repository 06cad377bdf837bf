// The HTTP endpoints of the daemon, as a pure function from a request to a
// response: no I/O, so every route is tested without sockets.
//
//   GET /         200, a short plain-text index of the endpoints
//   GET /healthz  liveness: 200 "ok\n", or 503 "unhealthy: <reason>\n"
//   GET /livez    the same as /healthz, under Kubernetes' name
//   GET /readyz   readiness: 200 "ok\n", or 503 "not ready: <reason>\n"
//   GET /leader   200 "leader\n" on the leader, else 503 "not leader\n"
//   GET /standby  200 "standby\n" when not the leader, else 503 "leader\n"
//   GET /status   200, application/json: the status object and "\n"
//   GET /metrics  200, Prometheus text format 0.0.4
//
// HEAD is answered like GET (the server drops the body). Other methods get
// 405 with `Allow: GET, HEAD`; unknown paths 404 "not found: <path>\n" (the
// path clipped to 200 characters, non-printable bytes shown as '?'). The
// query string is ignored. If a source throws, the answer is 500 with its
// message.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/http_server.hpp"

namespace baton {

/// What the probes need to know, taken fresh for each request.
/// (baton/health.hpp decides liveness and readiness.)
struct probe_view {
  bool healthy = true;           ///< live; false -> /healthz and /livez 503
  std::string unhealthy_reason;  ///< body of the 503, e.g. "leader has not renewed for 7200ms"
  bool ready = true;             ///< false -> /readyz 503
  std::string unready_reason;    ///< body of that 503, e.g. "the store has not answered for 12.0s"
  bool is_leader = false;        ///< /leader 200 vs 503, /standby the opposite
  /// The leader as this node knows it ("" = unknown), its term's token and
  /// its advertise address ("" = none known): /leader's and /standby's
  /// Baton-Leader, Baton-Leader-Token and Baton-Leader-Advertise headers.
  std::string leader;
  std::uint64_t leader_token = 0;
  std::string leader_advertise;
};

/// Where the routes get their data. An empty function answers 500 on the
/// routes that need it.
struct route_sources {
  std::function<probe_view()> probe;
  std::function<nlohmann::json()> status;     ///< /status body
  std::function<std::string()> metrics_text;  ///< /metrics body (Prometheus text format 0.0.4)
};

/// Content type of /metrics.
inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// Answer one request; never throws.
http_response route_request(const http_request_view& request, const route_sources& sources);

}  // namespace baton
