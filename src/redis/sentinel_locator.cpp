// sentinel_locator: see sentinel_locator.hpp.
#include "sentinel_locator.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <utility>

#include "redis_error.hpp"
#include "tcp_connect.hpp"

namespace baton::redis_detail {
namespace {

namespace asio = boost::asio;

constexpr milliseconds watch_backoff_initial{200};
constexpr milliseconds watch_backoff_max{5000};

std::optional<unsigned short> port_number(std::string_view text) {
  unsigned int port = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, port);
  if (ec != std::errc() || ptr != end || port == 0 || port > 65535) return std::nullopt;
  return static_cast<unsigned short>(port);
}

}  // namespace

// One sentinel: a connection for questions, one for the switch messages.
struct sentinel_locator::sentinel {
  sentinel(asio::io_context& io, connection_options o)
      : endpoint(o.endpoint), options(std::move(o)), retry(io) {
    endpoint.password.clear();
  }

  redis_endpoint endpoint;  // without the password, for status and messages
  connection_options options;
  std::shared_ptr<connection> query;
  std::shared_ptr<connection> watch;
  bool subscribed = false;
  asio::steady_timer retry;
  milliseconds backoff = watch_backoff_initial;
  std::string last_error;
};

std::shared_ptr<sentinel_locator> sentinel_locator::create(asio::io_context& io,
                                                           sentinel_locator_options options) {
  return std::shared_ptr<sentinel_locator>(new sentinel_locator(io, std::move(options)));
}

sentinel_locator::sentinel_locator(asio::io_context& io, sentinel_locator_options options)
    : io_(io), options_(std::move(options)), check_timer_(io) {
  for (auto& ep : options_.sentinels) {
    connection_options o;
    o.endpoint = ep;
    o.password_file = options_.password_file;
    o.password_file_option = "sentinel.password_file";
    o.connect_timeout = options_.connect_timeout;
    o.command_timeout = options_.command_timeout;
    o.transport = options_.transport;
    auto s = std::make_unique<sentinel>(io, o);
    s->query = connection::create(io, o);
    s->watch = connection::create(io, o);
    sentinels_.push_back(std::move(s));
  }
  // The connections keep the secrets they need; the options do not.
  for (auto& ep : options_.sentinels) ep.password.clear();
}

sentinel_locator::~sentinel_locator() { close(); }

void sentinel_locator::close() {
  if (closed_) return;
  closed_ = true;
  forget_switch_listener();
  check_timer_.cancel();
  for (auto& s : sentinels_) {
    s->query->close();
    s->watch->close();
    s->retry.cancel();
  }
  finish({boost::system::error_code(asio::error::operation_aborted), "closed"}, {});
}

std::string sentinel_locator::describe() const {
  return "master " + options_.master_name + " via " + std::to_string(sentinels_.size()) +
         (sentinels_.size() == 1 ? " sentinel" : " sentinels");
}

std::vector<store_member_status> sentinel_locator::sources() const {
  std::vector<store_member_status> out;
  for (const auto& s : sentinels_) {
    store_member_status m;
    m.role = "sentinel";
    m.endpoint = s->endpoint.redacted();
    const auto state = s->subscribed ? connection::state::connected : s->query->current_state();
    m.link = link_of(state);
    m.last_error = s->last_error;
    out.push_back(std::move(m));
  }
  return out;
}

void sentinel_locator::async_locate(locate_handler handler) {
  if (closed_) {
    asio::post(io_, [handler = std::move(handler)] {
      handler({boost::system::error_code(asio::error::operation_aborted), "closed"}, {});
    });
    return;
  }
  waiting_.push_back(std::move(handler));
  if (!watching_) start_watches();
  if (asking_) return;
  asking_ = true;
  failures_.clear();
  ask(preferred_ % sentinels_.size(), 0);
}

void sentinel_locator::not_a_master() {
  // The sentinel that answered last named a server that is not a master (a
  // stale sentinel, or one cut off from the others): try the next first.
  preferred_ = (preferred_ + 1) % sentinels_.size();
}

void sentinel_locator::ask(std::size_t index, std::size_t asked) {
  if (asked == sentinels_.size()) {
    std::string detail = "no sentinel named the master of " + options_.master_name + ": ";
    for (std::size_t i = 0; i < failures_.size(); ++i) detail += (i ? "; " : "") + failures_[i];
    finish({redis_errc::no_master, detail}, {});
    return;
  }
  sentinels_[index]->query->async_exec(
      {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name},
      [weak = weak_from_this(), index, asked](command_result r) {
        auto self = weak.lock();
        if (self && !self->closed_) self->on_answer(index, asked, r);
      });
}

void sentinel_locator::on_answer(std::size_t index, std::size_t asked, const command_result& r) {
  auto& s = *sentinels_[index];
  const std::string who = "sentinel " + s.endpoint.redacted();
  std::string failure;
  master_address where;
  const auto& e = r.reply.elements;
  if (r.ec) {
    // Connect failures name the address already; AUTH and the like do not.
    failure = r.detail.find(s.endpoint.host) == std::string::npos ? who + ": " + r.detail : r.detail;
  } else if (r.reply.kind == redis_reply::type::error) {
    failure = who + ": " + r.reply.str;
  } else if (r.reply.kind == redis_reply::type::nil) {
    failure = who + " does not monitor a master named " + options_.master_name;
  } else if (r.reply.kind != redis_reply::type::array || e.size() != 2 ||
             e[0].kind != redis_reply::type::string || e[0].str.empty() ||
             e[1].kind != redis_reply::type::string || !port_number(e[1].str)) {
    failure = who + ": unexpected answer " + describe_reply(r.reply);
  } else {
    where = {e[0].str, *port_number(e[1].str)};
  }
  if (!failure.empty()) {
    s.last_error = failure;
    failures_.push_back(std::move(failure));
    ask((index + 1) % sentinels_.size(), asked + 1);
    return;
  }
  preferred_ = index;
  finish({}, where);
}

void sentinel_locator::finish(store_error error, master_address where) {
  asking_ = false;
  if (!error) last_ = where;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& h : waiting) {
    asio::post(io_, [h = std::move(h), error, where] { h(error, where); });
  }
}

// --- following switches ------------------------------------------------------

void sentinel_locator::start_watches() {
  watching_ = true;
  for (std::size_t i = 0; i < sentinels_.size(); ++i) subscribe(i);
  schedule_check();
}

void sentinel_locator::subscribe(std::size_t index) {
  auto& s = *sentinels_[index];
  std::weak_ptr<sentinel_locator> weak = weak_from_this();
  s.watch->set_push_handler([weak, index](redis_reply message) {
    auto self = weak.lock();
    if (self && !self->closed_) self->on_switch_message(index, message);
  });
  s.watch->set_disconnect_handler([weak, index](std::error_code, std::string detail) {
    auto self = weak.lock();
    if (self && !self->closed_) self->retry_watch(index, std::move(detail));
  });
  s.watch->async_exec({"SUBSCRIBE", "+switch-master"}, [weak, index](command_result r) {
    auto self = weak.lock();
    if (!self || self->closed_) return;
    auto& me = *self->sentinels_[index];
    if (!r.ec && r.reply.kind == redis_reply::type::array) {
      me.subscribed = true;
      me.backoff = watch_backoff_initial;
      return;
    }
    self->retry_watch(index, r.ec ? r.detail
                                  : "sentinel " + me.endpoint.redacted() +
                                        ": SUBSCRIBE +switch-master: " + describe_reply(r.reply));
  });
}

void sentinel_locator::retry_watch(std::size_t index, std::string why) {
  auto& s = *sentinels_[index];
  s.subscribed = false;
  s.last_error = std::move(why);
  // A fresh connection: the old one may be half-subscribed.
  s.watch->close();
  s.retry.expires_after(s.backoff);
  s.backoff = std::min(s.backoff * 2, watch_backoff_max);
  s.retry.async_wait([weak = weak_from_this(), index](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closed_) return;
    auto& me = *self->sentinels_[index];
    me.watch = connection::create(self->io_, me.options);
    self->subscribe(index);
  });
}

void sentinel_locator::on_switch_message(std::size_t index, const redis_reply& message) {
  // ["message", "+switch-master", "<name> <old ip> <old port> <new ip> <new port>"]
  const auto& e = message.elements;
  if (e.size() != 3 || e[1].str != "+switch-master") return;
  std::istringstream words(e[2].str);
  std::string name, old_host, old_port, new_host, new_port;
  if (!(words >> name >> old_host >> old_port >> new_host >> new_port)) return;
  if (name != options_.master_name) return;
  const auto port = port_number(new_port);
  if (!port) return;
  const master_address now{new_host, *port};
  if (now == last_ || now == switched_to_) return;  // told already
  last_ = now;
  switched_to_ = now;
  tell_switch("sentinel " + sentinels_[index]->endpoint.redacted() +
              " announced +switch-master from " + old_host + ":" + old_port + " to " +
              now.text());
}

void sentinel_locator::schedule_check() {
  if (options_.check_interval <= milliseconds::zero()) return;
  check_timer_.expires_after(options_.check_interval);
  check_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closed_) return;
    const auto before = self->last_;
    self->async_locate([weak, before](store_error error, master_address where) {
      auto me = weak.lock();
      if (!me || me->closed_) return;
      // A switch message may have been lost, or a sentinel we could not
      // reach sent it: the answer differs from what the store connected to.
      if (!error && !before.host.empty() && !(where == before) && !(where == me->switched_to_)) {
        me->switched_to_ = where;
        me->tell_switch("the sentinels now name " + where.text() + " as the master (was " +
                        before.text() + ")");
      }
      me->schedule_check();
    });
  });
}

}  // namespace baton::redis_detail
