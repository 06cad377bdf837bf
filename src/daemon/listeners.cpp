// The daemon's listeners (see listeners.hpp).
#include "listeners.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <string>
#include <system_error>

#include "ack_command.hpp"

namespace baton {

namespace {

// The command `name`, served to the allowed uids only.
app_socket::command_handler allowed_only(const std::vector<unsigned>& allowed, const char* name,
                                         app_socket::command_handler handler) {
  return [allowed, name, handler = std::move(handler)](const nlohmann::json& request,
                                                        const peer_info& peer) {
    // Errors are thrown: the socket sends them back as {"type":"error"}.
    check_peer_uid(allowed, peer.uid, name);
    return handler(request, peer);
  };
}

}  // namespace

bool open_listeners(boost::asio::io_context& io, const config& cfg, app_socket& socket,
                    std::unique_ptr<http_server>& http, listener_handlers handlers) {
  const auto allowed =
      effective_allowed_uids(cfg.socket.allowed_uids, static_cast<unsigned>(::geteuid()));
  socket.add_command("stopped", allowed_only(allowed, "stopped", std::move(handlers.stopped)));
  socket.add_command("resign", allowed_only(allowed, "resign", std::move(handlers.resign)));
  socket.add_command("switchover",
                     allowed_only(allowed, "switchover", std::move(handlers.switchover)));
  socket.add_command("drain", allowed_only(allowed, "drain", std::move(handlers.drain)));
  socket.add_command("undrain", allowed_only(allowed, "undrain", std::move(handlers.undrain)));
  std::error_code ec;
  socket.open(ec);
  if (ec) {
    spdlog::critical("cannot open socket.path: {}", socket.last_error());
    return false;
  }
  if (cfg.http.listen.empty()) return true;
  http = std::make_unique<http_server>(
      io, cfg.http.listen,
      [routes = std::move(handlers.routes)](const http_request_view& r) {
        return route_request(r, routes);
      });
  http->open(ec);
  if (ec) {
    spdlog::critical("cannot serve http.listen: {}", http->last_error());
    return false;
  }
  auto endpoint = http->local_endpoint();
  spdlog::info("HTTP on {}:{} (/healthz /livez /readyz /leader /standby /status /metrics)",
               endpoint.address().to_string(), endpoint.port());
  return true;
}

void say_socket_path(const config& cfg) {
  if (!cfg.socket.path.empty()) {
    spdlog::info("app socket at {} (baton status --socket {})", cfg.socket.path, cfg.socket.path);
  } else {
    spdlog::info("no app socket (socket.path is not set): baton status and socket apps need "
                 "one, e.g. --socket $XDG_RUNTIME_DIR/baton.sock");
  }
}

}  // namespace baton
