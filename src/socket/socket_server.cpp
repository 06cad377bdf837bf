// Accepting clients, answering requests and fanning out events: see
// socket_server.hpp.
#include "socket_server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/error.hpp>
#include <chrono>
#include <exception>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <utility>

#include "baton/accept_loop.hpp"
#include "wire.hpp"

namespace baton::socket_detail {

namespace {
// The socket protocol's version: hello says it (and status, from the daemon). Raised
// only for a change that would break an existing client.
constexpr int protocol_version = 1;
}  // namespace
namespace {

using stream_protocol = boost::asio::local::stream_protocol;

peer_info credentials_of(int fd) {
  peer_info who;
  ucred cred{};
  socklen_t length = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 &&
      length == sizeof(cred)) {
    who.uid = cred.uid;
    who.gid = cred.gid;
    who.pid = cred.pid;
  }
  return who;
}

bool is_builtin(std::string_view name) {
  return name == "ping" || name == "status" || name == "subscribe";
}

shared_line make_line(const nlohmann::json& message) {
  return std::make_shared<const std::string>(encode_line(message));
}

}  // namespace

socket_server::socket_server(boost::asio::io_context& io, socket_config config,
                             app_socket::status_provider status)
    : config_(std::move(config)),
      status_(std::move(status)),
      acceptor_(io),
      retry_timer_(io) {}

socket_server::~socket_server() { close(); }

void socket_server::add_command(std::string name, app_socket::command_handler handler) {
  if (name.empty()) throw std::invalid_argument("socket: command name must not be empty");
  if (is_builtin(name)) {
    throw std::invalid_argument("socket: command '" + name + "' is built in");
  }
  if (!handler) throw std::invalid_argument("socket: command '" + name + "' has no handler");
  commands_[std::move(name)] = std::move(handler);
}

void socket_server::open(std::error_code& ec) {
  ec.clear();
  if (open_) return;
  last_error_.clear();
  if (config_.path.empty()) {
    spdlog::debug("socket: no path configured; not listening");
    return;
  }
  std::string message;
  const int fd = listen_at(config_.path, config_.mode, identity_, ec, message);
  if (fd < 0) {
    last_error_ = message;
    return;
  }
  boost::system::error_code assign_ec;
  acceptor_.assign(stream_protocol(), fd, assign_ec);
  if (assign_ec) {
    ::close(fd);
    remove_if_ours(config_.path, identity_);
    identity_ = {};
    ec = std::error_code(assign_ec.value(), std::generic_category());
    last_error_ = "cannot listen on " + config_.path + ": " + assign_ec.message();
    return;
  }
  open_ = true;
  spdlog::info("socket: listening on {} (mode {:o})", config_.path, config_.mode & 07777);
  accept_next(shared_from_this(), acceptor_, retry_timer_, generation_);
}

void socket_server::accept_failed(const boost::system::error_code& ec) {
  spdlog::warn("socket: accept on {} failed: {}", config_.path, ec.message());
}

void socket_server::accepted(stream_protocol::socket peer) {
  const peer_info who = credentials_of(peer.native_handle());
  if (sessions_.size() >= app_socket::max_clients) {
    reject(peer, who);
  } else {
    boost::system::error_code ignored;
    peer.non_blocking(true, ignored);
    auto client = std::make_shared<session>(std::move(peer), who, *this);
    sessions_.push_back(client);
    spdlog::debug("socket: client pid {} (uid {}) connected; {} clients", who.pid, who.uid,
                  sessions_.size());
    client->start();
  }
}

void socket_server::reject(stream_protocol::socket& peer, const peer_info& who) {
  spdlog::warn("socket: refusing client pid {}: too many clients (limit {})", who.pid,
               app_socket::max_clients);
  const std::string line = encode_line(error_reply(
      "too many clients (limit " + std::to_string(app_socket::max_clients) + ")"));
  // A fresh connection has an empty send buffer, so this small write does
  // not block; if it fails anyway the client just sees the close.
  (void)::send(peer.native_handle(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  boost::system::error_code ignored;
  peer.close(ignored);
}

void socket_server::handle_line(session& client, const std::string& line) {
  // A command handler may close or even destroy the app_socket.
  const auto keep = shared_from_this();
  const parsed_request parsed = parse_request(line);
  nlohmann::json reply;
  if (!parsed.error.empty()) {
    spdlog::debug("socket: client pid {}: {}", client.peer().pid, parsed.error);
    reply = error_reply(parsed.error);
  } else {
    reply = dispatch(client, parsed.cmd, parsed.request);
    if (!client.attached()) return;
  }
  echo_id(parsed.request, reply);
  respond(client, reply);
}

nlohmann::json socket_server::dispatch(session& client, const std::string& cmd,
                                       const nlohmann::json& request) {
  if (cmd == "ping") return {{"type", "pong"}};
  // A client that wants to know whom it talks to before relying on fields.
  if (cmd == "hello") {
    return {{"type", "hello"}, {"protocol", protocol_version}, {"baton", BATON_VERSION}};
  }
  if (cmd == "status") return status_reply();
  if (cmd == "subscribe") {
    client.subscribed = true;
    // Unchanged on purpose: clients compare this line as it is.
    return {{"type", "subscribed"}};
  }
  const auto found = commands_.find(cmd);
  if (found == commands_.end()) {
    spdlog::debug("socket: client pid {}: unknown command '{}'", client.peer().pid, clip(cmd));
    return error_reply("unknown command '" + clip(cmd) + "'");
  }
  // Copy: the handler may replace itself through add_command().
  const app_socket::command_handler handler = found->second;
  nlohmann::json result;
  try {
    result = handler(request, client.peer());
  } catch (const nlohmann::json::exception&) {
    // A handler reading a field of the wrong type: the library's text
    // ("[json.exception.type_error.302] ...") means nothing to the client.
    return error_reply("command '" + clip(cmd) + "': a field of the request is missing or has "
                       "the wrong type");
  } catch (const std::exception& e) {
    return error_reply(e.what());
  } catch (...) {
    return error_reply("command '" + cmd + "' failed");
  }
  if (result.is_object()) {
    if (!result.contains("type")) result["type"] = cmd;
    return result;
  }
  return {{"type", cmd}, {"result", std::move(result)}};
}

nlohmann::json socket_server::status_reply() {
  nlohmann::json reply{{"type", "status"}};
  if (!status_) return reply;
  nlohmann::json status;
  try {
    status = status_();
  } catch (const std::exception& e) {
    spdlog::warn("socket: status provider failed: {}", e.what());
    return error_reply(std::string("status unavailable: ") + e.what());
  }
  if (status.is_object()) {
    for (auto it = status.begin(); it != status.end(); ++it) {
      if (it.key() != "type") reply[it.key()] = it.value();
    }
  } else if (!status.is_null()) {
    reply["status"] = std::move(status);
  }
  return reply;
}

void socket_server::respond(session& client, const nlohmann::json& reply) {
  if (!client.send(make_line(reply))) drop(client, "not reading (queue full)");
}

void socket_server::line_too_long(session& client) {
  spdlog::warn("socket: client pid {} sent a line over {} bytes; disconnecting",
               client.peer().pid, app_socket::max_line_bytes);
  client.close_after(make_line(error_reply(
      "line too long (limit " + std::to_string(app_socket::max_line_bytes) + " bytes)")));
}

void socket_server::publish(const nlohmann::json& event) {
  if (subscriber_count() == 0) return;
  // Encoded once; every subscriber queues the same buffer.
  const shared_line line = make_line(event);
  std::vector<std::shared_ptr<session>> full;
  for (const auto& client : sessions_) {
    if (client->subscribed && !client->send(line)) full.push_back(client);
  }
  for (const auto& client : full) drop(*client, "not reading (queue full)");
}

std::size_t socket_server::subscriber_count() const {
  std::size_t count = 0;
  for (const auto& client : sessions_) count += client->subscribed ? 1 : 0;
  return count;
}

void socket_server::drop(session& client, const char* why) {
  spdlog::warn("socket: dropping client pid {}: {}", client.peer().pid, why);
  remove(client);
}

void socket_server::session_ended(session& client, const char* why) {
  spdlog::debug("socket: client pid {} {}; {} clients left", client.peer().pid, why,
                sessions_.size() - 1);
  remove(client);
}

void socket_server::remove(session& client) {
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->get() == &client) {
      const std::shared_ptr<session> keep = std::move(*it);
      sessions_.erase(it);
      keep->detach();
      return;
    }
  }
  client.detach();
}

void socket_server::close() {
  if (open_) spdlog::debug("socket: closing {}", config_.path);
  open_ = false;
  ++generation_;
  retry_timer_.cancel();
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  std::vector<std::shared_ptr<session>> clients;
  clients.swap(sessions_);
  for (const auto& client : clients) client->detach();
  if (!config_.path.empty()) remove_if_ours(config_.path, identity_);
  identity_ = {};
}

}  // namespace baton::socket_detail
