#include "listener.hpp"

#include <algorithm>

#include "announcement.hpp"
#include "postgres_error.hpp"
#include "session_pinning.hpp"
#include "store/nonce.hpp"

namespace baton::postgres_detail {

std::shared_ptr<listener> listener::create(boost::asio::io_context& io, listener_options options) {
  return std::shared_ptr<listener>(new listener(io, std::move(options)));
}

listener::listener(boost::asio::io_context& io, listener_options options)
    : io_(io), options_(std::move(options)), backoff_(options_.backoff_initial), timer_(io) {}

void listener::start() {
  if (stopped_ || state_ != state::off) return;
  open();
}

void listener::stop() {
  if (stopped_) return;
  stopped_ = true;
  ++attempt_;
  end_check();
  timer_.cancel();
  if (conn_) conn_->close();
  conn_.reset();
  state_ = state::off;
}

void listener::open() {
  ++attempt_;
  set_state(state::connecting);
  auto opts = options_.connection;
  opts.setup_sql = "LISTEN \"" + options_.channel + "\"";
  opts.on_notify = [weak = weak_from_this(), attempt = attempt_](std::string, std::string payload,
                                                                 int) {
    auto self = weak.lock();
    if (self && !self->stopped_ && attempt == self->attempt_) self->on_notification(payload);
  };
  conn_ = connection::create(io_, std::move(opts));
  conn_->set_disconnect_handler([weak = weak_from_this(), attempt = attempt_](std::error_code ec,
                                                                            std::string detail) {
    auto self = weak.lock();
    if (self && !self->stopped_ && attempt == self->attempt_) {
      self->lost({ec, "listening session: " + detail});
    }
  });
  probe_session_ = store_detail::random_hex(2);
  conn_->async_query("SELECT pg_notify($1, $2)",
                     {options_.channel, probe_payload(options_.election, probe_session_)},
                     [weak = weak_from_this(), attempt = attempt_](query_result r) {
                       auto self = weak.lock();
                       if (!self || self->stopped_ || attempt != self->attempt_) return;
                       if (r.ec) self->lost({r.ec, "listening session: " + r.detail});
                     });
  // The probe must come back within a statement's time after the connect.
  timer_.expires_after(options_.connection.connect_timeout + options_.connection.command_timeout);
  timer_.async_wait([weak = weak_from_this(), attempt = attempt_](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->stopped_ || attempt != self->attempt_) return;
    if (self->state_ != state::connecting) return;
    if (self->checking_) {
      self->lost({postgres_errc::timeout,
                  "listening session: the check for a pooler in transaction mode did not finish "
                  "in time"});
    } else if (self->conn_ && self->conn_->current_state() == connection::state::connected) {
      self->lost({postgres_errc::pooler,
                  "notifications sent on the listening session did not come back: baton needs a "
                  "direct or session-pooled connection (not a pooler in transaction mode, such as "
                  "PgBouncer with pool_mode=transaction)"});
    } else {
      self->lost({postgres_errc::connect_failed, "listening session: no connection in time"});
    }
  });
}

void listener::on_notification(const std::string& payload) {
  const auto a = parse_announcement(payload);
  if (!a) return;
  if (a->what == announcement::kind::probe) {
    if (a->session == probe_session_ && state_ == state::connecting) on_probe_returned();
    return;
  }
  if (a->election != options_.election || state_ != state::listening) return;
  if (a->what == announcement::kind::released) {
    if (a->session != options_.own_session && options_.on_release_or_relisten) {
      options_.on_release_or_relisten();
    }
    return;
  }
  if (options_.on_acquired) options_.on_acquired(a->holder, a->token);
}

void listener::on_probe_returned() {
  if (checking_) return;
  checking_ = true;
  abandon_check_ = check_session_pinned(io_, conn_, options_.connection,
                       [weak = weak_from_this(), attempt = attempt_](std::optional<store_error> e) {
                         auto self = weak.lock();
                         if (!self || self->stopped_ || attempt != self->attempt_) return;
                         self->checking_ = false;
                         self->abandon_check_ = nullptr;
                         if (e) return self->lost(std::move(*e));
                         self->on_session_checked();
                       });
}

void listener::on_session_checked() {
  backoff_ = options_.backoff_initial;
  set_state(state::listening);
  if (options_.on_release_or_relisten) options_.on_release_or_relisten();
  schedule_ping();
}

void listener::schedule_ping() {
  timer_.cancel();
  if (options_.ping_interval <= milliseconds::zero()) return;
  timer_.expires_after(options_.ping_interval);
  timer_.async_wait([weak = weak_from_this(), attempt = attempt_](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->stopped_ || attempt != self->attempt_ || !self->conn_) return;
    self->conn_->async_query("SELECT 1", {}, [weak, attempt](query_result r) {
      auto me = weak.lock();
      if (!me || me->stopped_ || attempt != me->attempt_) return;
      if (r.ec) {
        me->lost({r.ec, "listening session: " + r.detail});
      } else {
        me->schedule_ping();
      }
    });
  });
}

void listener::lost(store_error why) {
  ++attempt_;
  end_check();
  if (conn_) conn_->close();
  conn_.reset();
  if (options_.on_error) options_.on_error(why);
  set_state(state::waiting);
  timer_.cancel();
  timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  timer_.async_wait([weak = weak_from_this(), attempt = attempt_](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->stopped_ || attempt != self->attempt_) return;
    self->open();
  });
}

void listener::end_check() {
  checking_ = false;
  if (auto abandon = std::move(abandon_check_)) abandon();
  abandon_check_ = nullptr;
}

void listener::set_state(state next) {
  const bool was = state_ == state::listening;
  state_ = next;
  const bool is = state_ == state::listening;
  if (was != is && options_.on_listening_change) options_.on_listening_change(is);
}

}  // namespace baton::postgres_detail
