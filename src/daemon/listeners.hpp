// Opening the daemon's listeners at start-up: the app socket with the
// commands it serves beyond the built-in ones ("stopped", "resign",
// "switchover", each for the allowed uids only) and, when http.listen is set,
// the HTTP endpoint over the routes (baton/http_routes.hpp). Each listener
// that cannot be opened is logged as critical, naming the option.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "baton/app_socket.hpp"
#include "baton/config.hpp"
#include "baton/http_routes.hpp"
#include "baton/http_server.hpp"

namespace baton {

/// What the socket commands and the HTTP routes call; a command's handler
/// runs once the peer's uid was found allowed, and throws to answer with an
/// error.
struct listener_handlers {
  app_socket::command_handler stopped;
  app_socket::command_handler resign;
  app_socket::command_handler switchover;
  app_socket::command_handler drain;
  app_socket::command_handler undrain;
  route_sources routes;
};

/// Registers the commands on `socket` and opens it, then makes and opens the
/// HTTP server into `http` (left empty without http.listen). False, after
/// logging why, when one cannot be opened.
bool open_listeners(boost::asio::io_context& io, const config& cfg, app_socket& socket,
                    std::unique_ptr<http_server>& http, listener_handlers handlers);

/// Says where the app socket is, or that there is none and what needs one.
void say_socket_path(const config& cfg);

}  // namespace baton
