// redis_store: the lease operations as Lua scripts over one pipelined
// connection, plus the release watch on a second one. Every completion passes
// through a guard that drops it when the store is gone and turns it into
// operation_aborted once close() was called, so each handler runs exactly once
// (or, after destruction, never).
//
// Data loss: the command connection reads Redis's run_id (INFO server) on
// every (re)connect. When it differs from the one this store saw before (a
// restart or a failover), the fence script runs first on the new connection,
// ahead of any queued command: the fence holds every candidate's acquire back
// for one ttl (the latest ttl this store was given), and the token counter is
// lifted to at least the server's TIME. The acquire script itself does the
// same when it finds the counter missing. Either way the reset listener hears
// about it.
#include "baton/redis_store.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <utility>

#include "baton/lease_keys.hpp"
#include "baton/redis_reply.hpp"
#include "connection.hpp"
#include "scripts.hpp"
#include "subscriber.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using redis_detail::command_result;
using redis_detail::connection;
using redis_detail::lua_script;
using redis_detail::subscriber;

std::error_code aborted() { return boost::system::error_code(asio::error::operation_aborted); }

// 128 bits, drawn once: a restarted store in the same process still
// recognises the lease it holds.
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

}  // namespace

struct redis_store::impl {
  impl(asio::io_context& context, redis_store_options opts)
      : io(context),
        options(std::move(opts)),
        value(options.node_id + ":" + process_nonce()),
        lease(lease_key(options.election)),
        token(token_key(options.election)),
        fence(fence_key(options.election)),
        channel(events_channel(options.election)) {
    conn_options.endpoint = options.endpoint;
    if (!options.password.empty()) conn_options.endpoint.password = options.password;
    // The options copy must not keep the secret around longer than needed.
    options.password.clear();
    options.endpoint.password.clear();
    conn_options.connect_timeout = options.connect_timeout;
    conn_options.command_timeout = options.command_timeout;
    // Only the command connection asks who the server is; the watch
    // connection has nothing to protect.
    auto command_options = conn_options;
    command_options.on_ready = [this, weak = std::weak_ptr<int>(alive)](const std::string& id) {
      if (!weak.expired()) on_server(id);
    };
    conn = connection::create(io, std::move(command_options));
  }

  ~impl() {
    alive.reset();
    conn->close();
    if (watch) watch->stop();
  }

  // Runs `fn(args...)` later on the io_context unless the store is gone.
  template <typename Handler, typename... Args>
  void post_result(Handler handler, Args... args) {
    asio::post(io, [weak = std::weak_ptr<int>(alive), handler = std::move(handler), args...] {
      if (!weak.expired()) handler(args...);
    });
  }

  // EVALSHA, and EVAL when the server does not know the script (it forgets
  // them on restart). `done` runs only while the store is alive.
  void eval(const lua_script& script, std::vector<std::string> keys, std::vector<std::string> args,
            std::function<void(command_result)> done) {
    std::vector<std::string> command{"EVALSHA", script.sha1, std::to_string(keys.size())};
    for (auto& k : keys) command.push_back(std::move(k));
    for (auto& a : args) command.push_back(std::move(a));
    auto retry = command;
    retry[0] = "EVAL";
    retry[1] = std::string(script.source);
    conn->async_exec(
        std::move(command), [this, weak = std::weak_ptr<int>(alive), retry = std::move(retry),
                             done = std::move(done)](command_result r) mutable {
          if (weak.expired()) return;
          if (!r.ec && !closed && is_noscript_error(r.reply)) {
            conn->async_exec(std::move(retry), [weak, done = std::move(done)](command_result r2) {
              if (!weak.expired()) done(std::move(r2));
            });
            return;
          }
          done(std::move(r));
        });
  }

  // The common tail of every operation: closed -> aborted, transport error
  // or parse error -> its code (detail kept in last_error), else the value.
  template <typename T, typename Parse, typename Handler>
  void finish(const command_result& r, Parse parse, const Handler& handler) {
    if (closed) {
      handler(aborted(), T{});
      return;
    }
    if (r.ec) {
      last_error = r.detail;
      handler(r.ec, T{});
      return;
    }
    auto parsed = parse(r.reply);
    if (parsed.ec) {
      last_error = parsed.detail;
      handler(parsed.ec, T{});
      return;
    }
    handler(std::error_code(), std::move(parsed.value));
  }

  // After close() nothing is sent: the handler gets operation_aborted.
  template <typename T, typename Handler>
  bool reject_closed(Handler& handler) {
    if (!closed) return false;
    post_result(std::move(handler), aborted(), T{});
    return true;
  }

  // Redis rejects PX/PEXPIRE of 0 or less; say so before sending anything.
  template <typename T, typename Handler>
  bool reject_ttl(const char* what, milliseconds ttl, Handler& handler) {
    if (ttl > milliseconds::zero()) return false;
    last_error =
        std::string(what) + ": ttl must be positive, got " + std::to_string(ttl.count()) + " ms";
    post_result(std::move(handler), std::make_error_code(std::errc::invalid_argument), T{});
    return true;
  }

  // A new command connection is up and talks to the server `id`. Runs before
  // any queued command is sent there.
  void on_server(const std::string& id) {
    if (id.empty() || id == run_id) return;
    if (run_id.empty() || last_ttl <= milliseconds::zero()) {
      // A first connection is no change; without a ttl there is no lease to
      // protect yet.
      run_id = id;
      return;
    }
    const auto previous = run_id;
    std::vector<std::string> command{"EVAL", std::string(redis_detail::fence_script().source), "2",
                                     token, fence, std::to_string(last_ttl.count()),
                                     "run_id changed"};
    conn->async_exec(std::move(command), [this, weak = std::weak_ptr<int>(alive), previous,
                                          id](command_result r) {
      if (weak.expired() || closed) return;
      if (r.ec || r.reply.kind == redis_reply::type::error) {
        // Left unrecorded, so the next connection tries again; the acquire
        // queued behind it meets the same failure.
        last_error = r.ec ? r.detail : "fence: " + r.reply.str;
        return;
      }
      run_id = id;
      report_reset("run_id changed from " + previous + " to " + id);
    });
  }

  void report_reset(std::string why) {
    last_reset = why;
    if (!reset_listener) return;
    auto call = reset_listener;
    call(why);
  }

  void notify_acquired(const announced_term& term) {
    if (closed || !acquired_listener) return;
    auto call = acquired_listener;  // may close or destroy the store while it runs
    call(term.holder, term.token);
  }

  void notify_release() {
    if (closed || !listener) return;
    // A copy: the listener may close or destroy the store while it runs.
    auto call = listener;
    call();
  }

  asio::io_context& io;
  redis_store_options options;
  redis_detail::connection_options conn_options;
  const std::string value;
  const std::string lease;
  const std::string token;
  const std::string fence;
  const std::string channel;
  std::shared_ptr<connection> conn;
  std::shared_ptr<subscriber> watch;
  released_listener listener;
  redis_store::acquired_listener_type acquired_listener;
  // Completions hold a weak_ptr to this; expired = the store is gone.
  std::shared_ptr<int> alive = std::make_shared<int>(0);
  bool closed = false;
  std::string last_error;
  // The run_id of the server the command connection last talked to ("" =
  // none yet), and the latest ttl given to acquire or renew (the fence's).
  std::string run_id;
  milliseconds last_ttl{0};
  reset_listener_type reset_listener;
  std::string last_reset;
};

redis_store::redis_store(asio::io_context& io, redis_store_options options) {
  if (options.election.empty()) throw std::invalid_argument("redis_store: election is empty");
  if (options.node_id.empty()) throw std::invalid_argument("redis_store: node_id is empty");
  impl_ = std::make_unique<impl>(io, std::move(options));
}

redis_store::~redis_store() = default;

void redis_store::async_acquire(milliseconds ttl, acquire_handler handler) {
  auto& d = *impl_;
  if (d.reject_closed<acquire_reply>(handler) ||
      d.reject_ttl<acquire_reply>("acquire", ttl, handler))
    return;
  d.last_ttl = ttl;
  d.eval(redis_detail::acquire_script(), {d.lease, d.token, d.fence},
         {d.value, std::to_string(ttl.count()), d.channel},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<acquire_outcome>(r, parse_acquire_outcome,
                                     [&d, &handler](std::error_code ec, acquire_outcome o) {
                                       if (!ec && o.refusal == acquire_refusal::reset) {
                                         d.report_reset("token counter missing");
                                       }
                                       handler(ec, std::move(o.reply));
                                     });
         });
}

void redis_store::async_renew(milliseconds ttl, renew_handler handler) {
  auto& d = *impl_;
  if (d.reject_closed<renew_reply>(handler) || d.reject_ttl<renew_reply>("renew", ttl, handler))
    return;
  d.last_ttl = ttl;
  d.eval(redis_detail::renew_script(), {d.lease}, {d.value, std::to_string(ttl.count())},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<renew_reply>(r, parse_renew_reply, handler);
         });
}

void redis_store::async_release(release_handler handler) {
  auto& d = *impl_;
  if (d.reject_closed<bool>(handler)) return;
  d.eval(redis_detail::release_script(), {d.lease, d.token}, {d.value, d.channel},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<bool>(r, parse_release_reply, handler);
         });
}

void redis_store::watch_releases(released_listener listener) {
  auto& d = *impl_;
  if (d.closed) return;
  d.listener = std::move(listener);
  if (d.watch) return;
  redis_detail::subscriber_options opts;
  opts.connection = d.conn_options;
  opts.channel = d.channel;
  opts.own_value = d.value;
  opts.backoff_initial = d.options.resubscribe_backoff_initial;
  opts.backoff_max = d.options.resubscribe_backoff_max;
  opts.ping_interval = d.options.subscription_ping_interval;
  opts.on_acquired = [&d, weak = std::weak_ptr<int>(d.alive)](const announced_term& term) {
    if (!weak.expired()) d.notify_acquired(term);
  };
  d.watch = subscriber::create(d.io, std::move(opts), [&d, weak = std::weak_ptr<int>(d.alive)] {
    if (!weak.expired()) d.notify_release();
  });
  d.watch->start();
}

void redis_store::watch_acquisitions(acquired_listener_type listener) {
  impl_->acquired_listener = std::move(listener);
}

void redis_store::close() {
  auto& d = *impl_;
  if (d.closed) return;
  d.closed = true;
  d.conn->close();
  if (d.watch) d.watch->stop();
  d.listener = nullptr;
}

const std::string& redis_store::lease_value() const { return impl_->value; }

std::string redis_store::connection_state() const {
  switch (impl_->conn->current_state()) {
    case connection::state::connected:
      return "connected";
    case connection::state::connecting:
      return "connecting";
    default:
      return "disconnected";
  }
}

std::string redis_store::subscription_state() const {
  if (!impl_->watch) return "off";
  switch (impl_->watch->current_state()) {
    case subscriber::state::subscribed:
      return "subscribed";
    case subscriber::state::subscribing:
      return "connecting";
    case subscriber::state::waiting:
      return "disconnected";
    default:
      return "off";
  }
}

std::string redis_store::last_error() const { return impl_->last_error; }

void redis_store::on_store_reset(reset_listener_type listener) {
  impl_->reset_listener = std::move(listener);
}

std::string redis_store::last_reset() const { return impl_->last_reset; }

}  // namespace baton
