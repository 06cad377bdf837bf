// The Unix socket through which co-located apps follow the election:
// newline-delimited JSON, one object per line both ways. Subscribers get every
// event in order; a client that stops reading is dropped when its bounded queue
// fills, never allowed to block the daemon.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "baton/config.hpp"

namespace baton {

class app_socket {
 public:
  /// Builds the reply object of the `status` command.
  using status_provider = std::function<nlohmann::json()>;

  app_socket(boost::asio::io_context& io, socket_config config, status_provider status);
  ~app_socket();
  app_socket(const app_socket&) = delete;
  app_socket& operator=(const app_socket&) = delete;

  /// Create the socket file (replacing a stale one, refusing a live one or a
  /// non-socket file), set its mode, start accepting.
  void open(std::error_code& ec);
  /// Send `event` (one JSON object) to every subscriber, in order.
  void publish(const nlohmann::json& event);
  /// Stop accepting, close every client, remove the socket file.
  void close();
  /// Number of connected clients.
  std::size_t client_count() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
