// The daemon's endpoints: see http_routes.hpp.
#include "baton/http_routes.hpp"

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "printable.hpp"

namespace baton {
namespace {

using http_detail::printable;

// Echoed request data is clipped so a 404 cannot be turned into a large
// reflection of attacker bytes.
constexpr std::size_t max_echoed_path = 200;
constexpr std::size_t max_error_message = 1000;

constexpr const char* index_text =
    "baton\n"
    "\n"
    "/healthz  liveness: 200 unless a leader is wedged (503 with the reason)\n"
    "/livez    the same as /healthz\n"
    "/readyz   readiness: 200 when live and the store answered recently, 503 with the reason\n"
    "/leader   200 on the leader, 503 otherwise; headers Baton-Leader, Baton-Leader-Token and\n"
    "          Baton-Leader-Advertise say who leads and where its service is, when known\n"
    "/standby  200 when not the leader, 503 on the leader; the same headers\n"
    "/status   the daemon's status (JSON)\n"
    "/metrics  Prometheus metrics (text format 0.0.4)\n";

http_response text(unsigned status, std::string body) {
  http_response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

// Who leads, as headers, so that a proxy asking any node learns where the
// leader's service is without asking every node.
http_response with_leader(http_response response, const probe_view& probe) {
  if (probe.leader.empty()) return response;
  response.headers.emplace_back("Baton-Leader", probe.leader);
  response.headers.emplace_back("Baton-Leader-Token", std::to_string(probe.leader_token));
  if (!probe.leader_advertise.empty()) {
    response.headers.emplace_back("Baton-Leader-Advertise", probe.leader_advertise);
  }
  return response;
}

std::string_view path_of(std::string_view target) {
  const auto query = target.find_first_of("?#");
  return query == std::string_view::npos ? target : target.substr(0, query);
}

template <typename Source>
decltype(auto) call(const Source& source, const char* name) {
  if (!source) throw std::runtime_error(std::string(name) + " is not available");
  return source();
}

http_response dispatch(std::string_view path, const route_sources& sources) {
  if (path == "/") return text(200, index_text);
  // The store plays no part in liveness (see baton/health.hpp).
  if (path == "/healthz" || path == "/livez") {
    const probe_view probe = call(sources.probe, "health");
    if (probe.healthy) return text(200, "ok\n");
    return text(503, "unhealthy: " + printable(probe.unhealthy_reason, max_error_message) + "\n");
  }
  if (path == "/readyz") {
    const probe_view probe = call(sources.probe, "readiness");
    if (probe.ready) return text(200, "ok\n");
    return text(503, "not ready: " + printable(probe.unready_reason, max_error_message) + "\n");
  }
  if (path == "/leader") {
    const probe_view probe = call(sources.probe, "leadership");
    return with_leader(probe.is_leader ? text(200, "leader\n") : text(503, "not leader\n"),
                       probe);
  }
  if (path == "/standby") {
    const probe_view probe = call(sources.probe, "leadership");
    return with_leader(probe.is_leader ? text(503, "leader\n") : text(200, "standby\n"), probe);
  }
  if (path == "/status") {
    const nlohmann::json status = call(sources.status, "status");
    http_response response;
    response.content_type = "application/json";
    // Invalid UTF-8 in the daemon's data must not turn the page into a 500.
    response.body = status.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    return response;
  }
  if (path == "/metrics") {
    http_response response;
    response.content_type = prometheus_content_type;
    response.body = call(sources.metrics_text, "metrics");
    return response;
  }
  return text(404, "not found: " + printable(path, max_echoed_path) + "\n");
}

}  // namespace

http_response route_request(const http_request_view& request, const route_sources& sources) {
  if (request.method != "GET" && request.method != "HEAD") {
    http_response response = text(405, "method not allowed: " +
                                           printable(request.method, max_echoed_path) + "\n");
    response.headers.emplace_back("Allow", "GET, HEAD");
    return response;
  }
  const std::string_view path = path_of(request.target);
  try {
    return dispatch(path, sources);
  } catch (const std::exception& e) {
    return text(500, "internal error on " + printable(path, max_echoed_path) + ": " +
                         printable(e.what(), max_error_message) + "\n");
  } catch (...) {
    return text(500, "internal error on " + printable(path, max_echoed_path) + "\n");
  }
}

}  // namespace baton
