// cluster_locator: see cluster_locator.hpp.
#include "cluster_locator.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <utility>

#include "cluster_routing.hpp"
#include "redis_error.hpp"

namespace baton::redis_detail {
namespace {
namespace asio = boost::asio;
}  // namespace

struct cluster_locator::seed {
  redis_endpoint endpoint;  // without the password
  std::shared_ptr<connection> query;
  std::string last_error;
};

std::shared_ptr<cluster_locator> cluster_locator::create(asio::io_context& io,
                                                         cluster_locator_options options) {
  return std::shared_ptr<cluster_locator>(new cluster_locator(io, std::move(options)));
}

cluster_locator::cluster_locator(asio::io_context& io, cluster_locator_options options)
    : io_(io), options_(std::move(options)), slot_(key_slot(options_.key)) {
  for (auto& ep : options_.seeds) {
    connection_options o;
    o.endpoint = ep;
    o.password_file = options_.password_file;
    o.connect_timeout = options_.connect_timeout;
    o.command_timeout = options_.command_timeout;
    o.transport = options_.transport;
    auto s = std::make_unique<seed>();
    s->endpoint = ep;
    s->endpoint.password.clear();
    s->query = connection::create(io, std::move(o));
    seeds_.push_back(std::move(s));
    ep.password.clear();
  }
}

cluster_locator::~cluster_locator() { close(); }

void cluster_locator::close() {
  if (closed_) return;
  closed_ = true;
  forget_switch_listener();
  for (auto& s : seeds_) s->query->close();
  finish({boost::system::error_code(asio::error::operation_aborted), "closed"}, {});
}

std::string cluster_locator::describe() const {
  return "the master of slot " + std::to_string(slot_) + " via " + std::to_string(seeds_.size()) +
         (seeds_.size() == 1 ? " seed node" : " seed nodes");
}

std::vector<store_member_status> cluster_locator::sources() const {
  std::vector<store_member_status> out;
  for (const auto& s : seeds_) {
    store_member_status m;
    m.role = "seed";
    m.endpoint = s->endpoint.redacted();
    const auto state = s->query->current_state();
    m.link = link_of(state);
    m.last_error = s->last_error;
    out.push_back(std::move(m));
  }
  return out;
}

void cluster_locator::redirected(master_address where) { redirect_ = std::move(where); }

void cluster_locator::not_a_master() {
  redirect_.reset();
  preferred_ = (preferred_ + 1) % seeds_.size();
}

void cluster_locator::async_locate(locate_handler handler) {
  if (closed_) {
    asio::post(io_, [handler = std::move(handler)] {
      handler({boost::system::error_code(asio::error::operation_aborted), "closed"}, {});
    });
    return;
  }
  if (redirect_) {
    // Used once: if it is wrong too, the next attempt asks the map.
    auto where = std::move(*redirect_);
    redirect_.reset();
    asio::post(io_, [handler = std::move(handler), where] { handler({}, where); });
    return;
  }
  waiting_.push_back(std::move(handler));
  if (asking_) return;
  asking_ = true;
  failures_.clear();
  ask(preferred_ % seeds_.size(), 0, false);
}

void cluster_locator::ask(std::size_t index, std::size_t asked, bool slots_command) {
  if (asked == seeds_.size()) {
    std::string detail = "no seed node named the master of slot " + std::to_string(slot_) + ": ";
    for (std::size_t i = 0; i < failures_.size(); ++i) detail += (i ? "; " : "") + failures_[i];
    finish({redis_errc::no_master, detail}, {});
    return;
  }
  std::vector<std::string> command{"CLUSTER", slots_command ? "SLOTS" : "SHARDS"};
  seeds_[index]->query->async_exec(
      std::move(command), [weak = weak_from_this(), index, asked, slots_command](command_result r) {
        auto self = weak.lock();
        if (self && !self->closed_) self->on_answer(index, asked, slots_command, r);
      });
}

void cluster_locator::on_answer(std::size_t index, std::size_t asked, bool slots_command,
                                const command_result& r) {
  auto& s = *seeds_[index];
  const std::string who = "seed " + s.endpoint.redacted();
  if (!r.ec && !slots_command && r.reply.kind == redis_reply::type::error &&
      r.reply.str.find("unknown subcommand") != std::string::npos) {
    // Before Redis 7: the older command says the same.
    ask(index, asked, true);
    return;
  }
  std::string failure;
  master_address where;
  if (r.ec) {
    failure = r.detail;
  } else {
    const auto target = slots_command ? master_for_slot_from_slots(r.reply, slot_)
                                      : master_for_slot(r.reply, slot_, s.endpoint.tls);
    if (target.ec) {
      failure = who + ": " + target.detail;
    } else {
      where = {target.value.host.empty() ? s.endpoint.host : target.value.host, target.value.port};
    }
  }
  if (!failure.empty()) {
    s.last_error = failure;
    failures_.push_back(std::move(failure));
    ask((index + 1) % seeds_.size(), asked + 1, false);
    return;
  }
  preferred_ = index;
  finish({}, where);
}

void cluster_locator::finish(store_error error, master_address where) {
  asking_ = false;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& h : waiting) {
    asio::post(io_, [h = std::move(h), error, where] { h(error, where); });
  }
}

}  // namespace baton::redis_detail
