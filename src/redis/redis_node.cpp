// redis_node: see redis_node.hpp.
#include "redis_node.hpp"

#include <boost/asio/steady_timer.hpp>
#include <utility>

#include "cluster_routing.hpp"
#include "redis_reply.hpp"
#include "redis_error.hpp"

namespace baton::redis_detail {

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

redis_node::redis_node(boost::asio::io_context& io, node_options options)
    : io_(io), options_(std::move(options)) {
  // The connection has its own copy; this one must not keep the secret.
  options_.connection.endpoint.password.clear();
}

redis_node::~redis_node() {
  if (conn_) conn_->close();
}

// One script call across its retries: NOSCRIPT (then EVAL), a Cluster's
// MOVED, ASK and TRYAGAIN.
struct redis_node::attempt {
  std::string sha1;
  std::vector<std::string> command;  // the EVALSHA form
  std::vector<std::string> eval;     // the EVAL form: a connection's first call, NOSCRIPT, ASK
  bool sent_sha = false;             // the last round went as EVALSHA
  std::vector<std::string> follow_up;
  std::function<void(eval_reply)> done;
  int redirects = 0;
  std::shared_ptr<boost::asio::steady_timer> pause;
};

namespace {

// Redirects and retries of one call, at most: a slot that keeps moving, or
// a migration that takes longer than this many TRYAGAIN pauses, fails the
// call and the election's own retry takes over.
constexpr int max_redirects = 8;
constexpr milliseconds tryagain_pause{25};

// "host" of "host:port" or "[v6]:port".
std::string host_of(const std::string& peer) {
  auto host = peer.substr(0, peer.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

}  // namespace

void redis_node::eval(const lua_script& script, std::vector<std::string> keys,
                      std::vector<std::string> args, std::function<void(command_result)> done) {
  eval_with(script, std::move(keys), std::move(args), {},
            [done = std::move(done)](eval_reply r) { done(std::move(r.script)); });
}

void redis_node::eval_with(const lua_script& script, std::vector<std::string> keys,
                           std::vector<std::string> args, std::vector<std::string> follow_up,
                           std::function<void(eval_reply)> done) {
  auto a = std::make_shared<attempt>();
  a->sha1 = script.sha1;
  a->command = {"EVALSHA", script.sha1, std::to_string(keys.size())};
  for (auto& k : keys) a->command.push_back(std::move(k));
  for (auto& v : args) a->command.push_back(std::move(v));
  a->eval = a->command;
  a->eval[0] = "EVAL";
  a->eval[1] = std::string(script.source);
  a->follow_up = std::move(follow_up);
  a->done = std::move(done);
  run(a);
}

void redis_node::exec(std::vector<std::string> command, std::function<void(command_result)> done) {
  conn_->async_exec(std::move(command), std::move(done));
}

void redis_node::reconnect(const std::string& why) { conn_->reconnect(why); }

void redis_node::run(const std::shared_ptr<attempt>& a) {
  // The replies of this round: both must be in before deciding, since a
  // redirect drops the connection the follow-up is still waiting on.
  auto replies = std::make_shared<eval_reply>();
  const bool with_follow_up = !a->follow_up.empty();
  auto left = std::make_shared<int>(with_follow_up ? 2 : 1);
  auto arrived = [weak = weak_from_this(), a, replies, left] {
    if (--*left > 0) return;
    if (auto self = weak.lock()) {
      self->on_replies(a, std::move(*replies));
    } else {
      a->done(std::move(*replies));
    }
  };
  // A script's first call on a connection goes as EVAL, which loads it, so
  // an EVALSHA never meets NOSCRIPT after a restart: the EVAL retried after
  // one would run behind calls sent after it (a release behind the same
  // node's next grant, undoing it). Later calls on that connection are
  // pipelined behind the EVAL and find the script.
  const auto loaded = loaded_on_.find(a->sha1);
  a->sent_sha = loaded != loaded_on_.end() && loaded->second == conn_->generation();
  conn_->async_exec(a->sent_sha ? a->command : a->eval, [replies, arrived](command_result r) {
    replies->script = std::move(r);
    arrived();
  });
  // Read after the call: a command that starts a connection runs on that one.
  loaded_on_[a->sha1] = conn_->generation();
  if (with_follow_up) {
    conn_->async_exec(a->follow_up, [replies, arrived](command_result r) {
      replies->follow_up = std::move(r);
      arrived();
    });
  }
}

void redis_node::on_replies(const std::shared_ptr<attempt>& a, eval_reply replies) {
  const auto& r = replies.script;
  if (closed_) {
    a->done(std::move(replies));
    return;
  }
  if (r.ec) {
    // The connection's ROLE check found a replica where a master was named.
    if (r.ec == redis_errc::not_master && options_.locator) options_.locator->not_a_master();
    a->done(std::move(replies));
    return;
  }
  if (r.reply.kind != redis_reply::type::error) {
    a->done(std::move(replies));
    return;
  }
  const auto& text = r.reply.str;
  // Only an operator's SCRIPT FLUSH on a live connection gets here.
  if (is_noscript_error(r.reply) && a->sent_sha) {
    loaded_on_.erase(a->sha1);
    run(a);
    return;
  }
  if (!options_.locator) {
    a->done(std::move(replies));
    return;
  }
  const std::string peer = conn_->peer();
  if (auto redirect = parse_redirect(text); redirect && ++a->redirects <= max_redirects) {
    master_address where{redirect->host.empty() ? host_of(peer) : redirect->host,
                         static_cast<unsigned short>(redirect->port)};
    if (redirect->kind == cluster_redirect::kind::ask) {
      run_asking(a, where);
      return;
    }
    options_.locator->redirected(where);
    conn_->reconnect(peer + " answered " + text);
    run(a);
    return;
  }
  if (is_tryagain(text) && ++a->redirects <= max_redirects) {
    // A multi-key script during a slot migration: some keys moved, some not.
    if (!a->pause) a->pause = std::make_shared<boost::asio::steady_timer>(io_);
    a->pause->expires_after(tryagain_pause);
    a->pause->async_wait([weak = weak_from_this(), a](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (!self || ec) return;
      self->run(a);
    });
    return;
  }
  if (needs_new_master(text) || is_clusterdown(text)) {
    // A demoted master (READONLY), one that lost its replicas, a cluster
    // that is failing over: locate the master again on a new connection.
    options_.locator->not_a_master();
    conn_->reconnect(peer + " answered " + text);
    replies.script.ec = redis_errc::not_master;
    replies.script.detail = peer + " answered " + text;
  }
  a->done(std::move(replies));
}

// An ASK: the slot is being migrated and our keys are already on `where`;
// the command goes there once, after ASKING, on a connection of its own.
void redis_node::run_asking(const std::shared_ptr<attempt>& a, master_address where) {
  auto options = options_.connection;
  options.endpoint.kind = redis_endpoint::transport::tcp;
  options.endpoint.host = where.host;
  options.endpoint.port = where.port;
  options.transport = nullptr;
  options.on_ready = nullptr;
  options.confirm_master = false;
  auto once = connection::create(io_, std::move(options));
  auto replies = std::make_shared<eval_reply>();
  const bool with_follow_up = !a->follow_up.empty();
  auto left = std::make_shared<int>(with_follow_up ? 2 : 1);
  auto arrived = [weak = weak_from_this(), a, replies, left, once] {
    if (--*left > 0) return;
    once->close();
    auto self = weak.lock();
    if (self && !replies->script.ec && replies->script.reply.kind == redis_reply::type::error &&
        !self->closed_) {
      // Whatever the target said (a MOVED once the migration ended) is
      // handled as if the master had said it.
      self->on_replies(a, std::move(*replies));
      return;
    }
    a->done(std::move(*replies));
  };
  once->async_exec({"ASKING"}, [](command_result) {});
  once->async_exec(a->eval, [replies, arrived](command_result r) {
    replies->script = std::move(r);
    arrived();
  });
  if (with_follow_up) {
    once->async_exec(a->follow_up, [replies, arrived](command_result r) {
      replies->follow_up = std::move(r);
      arrived();
    });
  }
}

connection::state redis_node::current_state() const { return conn_->current_state(); }

void redis_node::close() {
  if (closed_) return;
  closed_ = true;
  options_.on_reset = nullptr;
  options_.on_promotion = nullptr;
  options_.on_failure = nullptr;
  conn_->close();
}

std::vector<std::string> redis_node::switch_command() const {
  const auto ttl = std::to_string(options_.ttl.count());
  if (options_.switch_keys.empty()) {
    return {"EVAL",
            std::string(fence_script().source),
            "2",
            options_.token_key,
            options_.fence_key,
            ttl,
            "run_id changed"};
  }
  std::vector<std::string> command{"EVAL", std::string(switch_script().source),
                                   std::to_string(options_.switch_keys.size())};
  command.insert(command.end(), options_.switch_keys.begin(), options_.switch_keys.end());
  command.push_back(ttl);
  command.insert(command.end(), options_.switch_args.begin(), options_.switch_args.end());
  return command;
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
  const bool replicated = !options_.switch_keys.empty();
  conn_->async_exec(switch_command(), [weak = weak_from_this(), previous, id,
                                       replicated](command_result r) {
    auto self = weak.lock();
    if (!self || self->closed_) return;
    auto fail = [&](store_error e) {
      // Left unrecorded, so the next connection tries again; the command
      // queued behind it meets the same failure.
      if (self->options_.on_failure) self->options_.on_failure(std::move(e));
    };
    if (r.ec) return fail({r.ec, r.detail});
    if (r.reply.kind == redis_reply::type::error) {
      return fail({classify_error_reply(r.reply.str),
                   (replicated ? "server switch: " : "fence: ") + r.reply.str});
    }
    server_switch seen;  // the fence script's answer: fenced
    if (replicated) {
      auto parsed = parse_switch_reply(r.reply);
      if (parsed.ec) return fail({parsed.ec, parsed.detail});
      seen = std::move(parsed.value);
    }
    self->run_id_ = id;
    const auto why = "run_id changed from " + previous + " to " + id;
    if (seen.held_back()) {
      if (self->options_.on_reset) self->options_.on_reset(why);
    } else if (seen.what == server_switch::seen::promoted) {
      if (self->options_.on_promotion) self->options_.on_promotion(why);
    }
  });
}

}  // namespace baton::redis_detail
