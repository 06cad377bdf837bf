// redis_node: see redis_node.hpp.
#include "redis_node.hpp"

#include <cstdio>
#include <random>
#include <utility>

#include "redis_error.hpp"

namespace baton::redis_detail {

const std::string& process_nonce() {
  static const std::string nonce = [] {
    std::random_device rd;
    std::string hex;
    for (int i = 0; i < 4; ++i) {
      char buf[9];
      std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned int>(rd()));
      hex += buf;
    }
    return hex;
  }();
  return nonce;
}

std::shared_ptr<redis_node> redis_node::create(boost::asio::io_context& io, node_options options) {
  // The connection keeps the password for its reconnects; the node does not.
  auto conn_options = options.connection;
  auto node = std::shared_ptr<redis_node>(new redis_node(io, std::move(options)));
  // on_ready needs the shared pointer, so the connection is made here.
  conn_options.on_ready = [weak = std::weak_ptr<redis_node>(node)](const std::string& id) {
    if (auto self = weak.lock()) self->on_server(id);
  };
  node->conn_ = connection::create(io, std::move(conn_options));
  return node;
}

redis_node::redis_node(boost::asio::io_context&, node_options options)
    : options_(std::move(options)) {
  // The connection has its own copy; this one must not keep the secret.
  options_.connection.endpoint.password.clear();
}

redis_node::~redis_node() {
  if (conn_) conn_->close();
}

void redis_node::eval(const lua_script& script, std::vector<std::string> keys,
                      std::vector<std::string> args, std::function<void(command_result)> done) {
  std::vector<std::string> command{"EVALSHA", script.sha1, std::to_string(keys.size())};
  for (auto& k : keys) command.push_back(std::move(k));
  for (auto& a : args) command.push_back(std::move(a));
  auto retry = command;
  retry[0] = "EVAL";
  retry[1] = std::string(script.source);
  conn_->async_exec(std::move(command), [weak = weak_from_this(), retry = std::move(retry),
                                         done = std::move(done)](command_result r) mutable {
    auto self = weak.lock();
    if (self && !r.ec && !self->closed_ && is_noscript_error(r.reply)) {
      self->conn_->async_exec(std::move(retry), std::move(done));
      return;
    }
    done(std::move(r));
  });
}

connection::state redis_node::current_state() const { return conn_->current_state(); }

void redis_node::close() {
  if (closed_) return;
  closed_ = true;
  options_.on_reset = nullptr;
  options_.on_failure = nullptr;
  conn_->close();
}

// A new connection is up and talks to the server `id`; runs before any
// queued command is sent there.
void redis_node::on_server(const std::string& id) {
  if (closed_ || id.empty() || id == run_id_) return;
  if (run_id_.empty()) {
    // A first connection is no change.
    run_id_ = id;
    return;
  }
  const auto previous = run_id_;
  std::vector<std::string> command{"EVAL",
                                   std::string(fence_script().source),
                                   "2",
                                   options_.token_key,
                                   options_.fence_key,
                                   std::to_string(options_.ttl.count()),
                                   "run_id changed"};
  conn_->async_exec(std::move(command), [weak = weak_from_this(), previous, id](command_result r) {
    auto self = weak.lock();
    if (!self || self->closed_) return;
    if (r.ec || r.reply.kind == redis_reply::type::error) {
      // Left unrecorded, so the next connection tries again; the command
      // queued behind it meets the same failure.
      if (self->options_.on_failure) {
        self->options_.on_failure(
            r.ec ? store_error{r.ec, r.detail}
                 : store_error{classify_error_reply(r.reply.str), "fence: " + r.reply.str});
      }
      return;
    }
    self->run_id_ = id;
    if (self->options_.on_reset) {
      self->options_.on_reset("run_id changed from " + previous + " to " + id);
    }
  });
}

}  // namespace baton::redis_detail
