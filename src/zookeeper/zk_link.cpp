#include "zk_link.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>

#include "zookeeper_on_demand.hpp"

namespace baton::zookeeper_detail {
namespace {

namespace asio = boost::asio;

// Creator-all for the credentials the session authenticated with, read for
// everyone: other clients of the ensemble cannot change or delete the
// election's nodes, while tools can still look.
Id auth_id{const_cast<char*>("auth"), const_cast<char*>("")};
Id world_id{const_cast<char*>("world"), const_cast<char*>("anyone")};
ACL baton_acl_entries[] = {{ZOO_PERM_ALL, auth_id}, {ZOO_PERM_READ, world_id}};
ACL_vector baton_acl{2, baton_acl_entries};

node_seen from_stat(const Stat& s) {
  node_seen n;
  n.exists = true;
  n.version = s.version;
  n.czxid = s.czxid;
  n.ctime_ms = s.ctime;
  n.mtime_ms = s.mtime;
  n.owner_session = s.ephemeralOwner;
  return n;
}

// One request in flight: what the completion needs, and everything the
// client reads from or writes into until it completes.
struct call {
  zk_link* link = nullptr;
  zk_link::node_handler node_done;
  zk_link::multi_handler multi_done;
  zk_link::children_handler children_done;
  std::vector<std::string> keep;
  std::vector<zoo_op_t> ops;
  std::vector<zoo_op_result_t> results;
  std::vector<Stat> stats;
};

void deliver_node(std::unique_ptr<call> c, int rc, node_seen seen) {
  c->link->answered();
  c->link->post([done = std::move(c->node_done), rc, seen = std::move(seen)] { done(rc, seen); });
}

void on_data(int rc, const char* value, int len, const Stat* stat, const void* data) {
  std::unique_ptr<call> c(static_cast<call*>(const_cast<void*>(data)));
  node_seen seen;
  if (rc == ZOK && stat) {
    seen = from_stat(*stat);
    if (value && len > 0) seen.data.assign(value, static_cast<std::size_t>(len));
  }
  deliver_node(std::move(c), rc, std::move(seen));
}

void on_stat(int rc, const Stat* stat, const void* data) {
  std::unique_ptr<call> c(static_cast<call*>(const_cast<void*>(data)));
  node_seen seen;
  if (rc == ZOK && stat) seen = from_stat(*stat);
  deliver_node(std::move(c), rc, std::move(seen));
}

void on_created(int rc, const char*, const Stat* stat, const void* data) {
  on_stat(rc, stat, data);
}

void on_children(int rc, const String_vector* strings, const void* data) {
  std::unique_ptr<call> c(static_cast<call*>(const_cast<void*>(data)));
  std::vector<std::string> names;
  if (rc == ZOK && strings) {
    for (std::int32_t i = 0; i < strings->count; ++i) {
      if (strings->data[i]) names.emplace_back(strings->data[i]);
    }
  }
  c->link->answered();
  c->link->post(
      [done = std::move(c->children_done), rc, names = std::move(names)] { done(rc, names); });
}

void on_multi(int rc, const void* data) {
  std::unique_ptr<call> c(static_cast<call*>(const_cast<void*>(data)));
  std::vector<zk_op_result> results(c->ops.size());
  for (std::size_t i = 0; i < c->ops.size(); ++i) {
    results[i].rc = c->results[i].err;
    if (c->ops[i].type == ZOO_SETDATA_OP && c->results[i].err == ZOK) {
      results[i].stat = from_stat(c->stats[i]);
    }
  }
  c->link->answered();
  c->link->post(
      [done = std::move(c->multi_done), rc, results = std::move(results)] { done(rc, results); });
}

void on_auth(int, const void*) {}

// Hands a new call to the C client: `start` makes its zoo_a* request with
// the call as the completion's data. A request the client refuses (or one
// with no handle to send it on) completes with its code, posted as an
// answer would be: false then, and nothing was sent. `slot`: the call's
// handler for this kind of request.
template <typename Handler>
bool hand_to_client(zk_link& link, bool has_handle, Handler call::*slot, Handler done,
                    const std::function<int(void*)>& start) {
  auto c = std::make_unique<call>();
  c->link = &link;
  c.get()->*slot = std::move(done);
  const int rc = has_handle ? start(c.get()) : ZINVALIDSTATE;
  if (rc != ZOK) {
    link.post([done = std::move(c.get()->*slot), rc] { done(rc, {}); });
    return false;
  }
  c.release();
  return true;
}

}  // namespace

struct zk_link::watch_context {
  zk_link* link = nullptr;
  std::weak_ptr<int> alive;
};

namespace {

void on_watch(zhandle_t*, int type, int state, const char* path, void* ctx) {
  auto* w = static_cast<zk_link::watch_context*>(ctx);
  if (!w || w->alive.expired()) return;
  auto* link = w->link;
  // Copies of the owner's callbacks: the link may be gone when they run.
  if (type == ZOO_SESSION_EVENT) {
    link->post([fn = link->options().on_state, state] {
      if (fn) fn(state);
    });
    return;
  }
  link->post([fn = link->options().on_node_event, type, p = std::string(path ? path : "")] {
    if (fn) fn(type, p);
  });
}

}  // namespace

zk_link::zk_link(asio::io_context& io, zk_link_options options)
    : io_(io),
      options_(std::move(options)),
      descriptor_(io),
      timer_(io),
      silence_timer_(io),
      handshake_timer_(io) {}

std::shared_ptr<zk_link> zk_link::open(asio::io_context& io, zk_link_options options,
                                       std::string& error) {
  if (const auto missing = zookeeper_client_load_error()) {
    error = "the zookeeper store needs the ZooKeeper C client: " + *missing;
    return nullptr;
  }
  // The client's own log would go to stderr; the store reports what matters.
  static const bool quiet = [] {
    zoo_set_debug_level(static_cast<ZooLogLevel>(0));
    return true;
  }();
  (void)quiet;
  std::shared_ptr<zk_link> link(new zk_link(io, std::move(options)));
  link->watch_ = std::make_unique<watch_context>();
  link->watch_->link = link.get();
  link->watch_->alive = link->watch_alive_;
  errno = 0;
  link->zh_ = zookeeper_init(link->options_.hosts.c_str(), on_watch,
                             static_cast<int>(link->options_.session_timeout.count()), nullptr,
                             link->watch_.get(), 0);
  if (!link->zh_) {
    error = "the ZooKeeper client refused the server list \"" + link->options_.hosts +
            "\": " + std::strerror(errno ? errno : EINVAL);
    return nullptr;
  }
  if (!link->options_.digest.empty()) {
    zoo_add_auth(link->zh_, "digest", link->options_.digest.data(),
                 static_cast<int>(link->options_.digest.size()), on_auth, nullptr);
  }
  link->pump();
  return link;
}

zk_link::~zk_link() {
  close();
}

void zk_link::post(std::function<void()> fn) {
  asio::post(io_, [w = options_.owner, fn = std::move(fn)] {
    if (!w.expired()) fn();
  });
}

int zk_link::state() const {
  return zh_ ? zoo_state(zh_) : 0;
}

bool zk_link::connected() const {
  return state() == ZOO_CONNECTED_STATE;
}

std::int64_t zk_link::session_id() const {
  if (!zh_) return 0;
  const auto* id = zoo_client_id(zh_);
  return id ? id->client_id : 0;
}

milliseconds zk_link::negotiated_timeout() const {
  return milliseconds(zh_ && connected() ? zoo_recv_timeout(zh_) : 0);
}

std::string zk_link::connected_server() const {
  if (!zh_ || !connected()) return {};
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (!zookeeper_get_connected_host(zh_, reinterpret_cast<sockaddr*>(&addr), &len)) return {};
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(a->sin_port));
  }
  const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
  inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
  return "[" + std::string(text) + "]:" + std::to_string(ntohs(a->sin6_port));
}

void zk_link::pump() {
  if (closed_ || !zh_ || pumping_) return;
  pumping_ = true;
  int fd = -1;
  int interest = 0;
  timeval tv{};
  const int rc = zookeeper_interest(zh_, &fd, &interest, &tv);
  pumping_ = false;
  fd_ = fd;
  report_state();
  watch_handshake();
  if (rc == ZINVALIDSTATE) {
    // Expired or refused: the handle is done; the state event says so.
    arm(-1, 0, milliseconds(-1));
    return;
  }
  auto wait = milliseconds(static_cast<std::int64_t>(tv.tv_sec) * 1000 + tv.tv_usec / 1000);
  // At least 1 ms, so that a handle asking for an immediate turn without a
  // socket cannot spin the loop.
  arm(fd, interest, std::max(wait, milliseconds(1)));
}

void zk_link::process(int events) {
  if (closed_ || !zh_) return;
  zookeeper_process(zh_, events);
  pump();
}

// The client does not tell every change of state to the watcher (a broken
// connection goes back to connecting silently): each turn compares.
void zk_link::report_state() {
  if (closed_ || !zh_) return;
  const int now = zoo_state(zh_);
  if (now == reported_state_) return;
  reported_state_ = now;
  post([fn = options_.on_state, now] {
    if (fn) fn(now);
  });
}

void zk_link::arm(int fd, int interest, milliseconds wait) {
  const auto gen = ++generation_;
  boost::system::error_code ec;
  if (descriptor_.is_open()) {
    descriptor_.cancel(ec);
    // The client owns the fd: asio lets go of it without closing it.
    descriptor_.release();
  }
  timer_.cancel();
  const std::weak_ptr<int> alive = alive_;
  if (fd >= 0 && (interest & (ZOOKEEPER_READ | ZOOKEEPER_WRITE)) != 0) {
    descriptor_.assign(fd, ec);
    if (!ec) {
      if (interest & ZOOKEEPER_READ) {
        descriptor_.async_wait(asio::posix::stream_descriptor::wait_read,
                               [this, alive, gen](const boost::system::error_code& e) {
                                 if (alive.expired() || e || gen != generation_) return;
                                 process(ZOOKEEPER_READ);
                               });
      }
      if (interest & ZOOKEEPER_WRITE) {
        descriptor_.async_wait(asio::posix::stream_descriptor::wait_write,
                               [this, alive, gen](const boost::system::error_code& e) {
                                 if (alive.expired() || e || gen != generation_) return;
                                 process(ZOOKEEPER_WRITE);
                               });
      }
    }
  }
  if (wait < milliseconds(0)) return;
  timer_.expires_after(wait);
  timer_.async_wait([this, alive, gen](const boost::system::error_code& e) {
    if (alive.expired() || e || gen != generation_) return;
    pump();
  });
}

void zk_link::sent() {
  if (unanswered_++ > 0) return;
  quiet_since_ = mono_clock::now();
  arm_silence();
}

void zk_link::answered() {
  if (unanswered_ > 0) --unanswered_;
  quiet_since_ = mono_clock::now();
  if (unanswered_ == 0) silence_timer_.cancel();
}

void zk_link::arm_silence() {
  if (closed_ || options_.silence_limit <= milliseconds(0)) return;
  silence_timer_.expires_at(quiet_since_ + options_.silence_limit);
  silence_timer_.async_wait(
      [this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& e) {
        if (alive.expired() || e || closed_ || unanswered_ == 0) return;
        // An answer since the timer was set moved the quiet time on.
        if (mono_clock::now() < quiet_since_ + options_.silence_limit) return arm_silence();
        move_off_silent_server();
      });
}

namespace {

// The local port of the client's socket (0 = none): a new connection
// attempt has a new socket, which may reuse the number of the one before.
int local_port(int fd) {
  if (fd < 0) return 0;
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

}  // namespace

// A stalled server still accepts connections (the kernel does), and then
// answers nothing to the session's handshake: the client would wait two
// thirds of the session timeout on it. Each attempt gets the silence limit
// too, so that a move that lands on a stalled server (or a cycle through
// servers that refuse clients while they elect a leader) goes on.
void zk_link::watch_handshake() {
  const int attempt = connected() ? 0 : local_port(fd_);
  if (attempt == attempt_) return;
  attempt_ = attempt;
  handshake_timer_.cancel();
  if (attempt == 0 || closed_ || options_.silence_limit <= milliseconds(0)) return;
  handshake_timer_.expires_after(options_.silence_limit);
  handshake_timer_.async_wait(
      [this, alive = std::weak_ptr<int>(alive_), attempt](const boost::system::error_code& e) {
        if (alive.expired() || e || closed_ || !zh_ || connected() || attempt != attempt_) return;
        if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
        process(ZOOKEEPER_READ);
      });
}

// The socket is shut down under the client, which reads its end as a broken
// connection: the requests in flight fail with ZCONNECTIONLOSS and the next
// turn connects to another server (the client steps past the one it was on)
// with the same session. The stalled server, once it runs again, gets the
// session's requests it had not read yet refused: the ensemble's leader
// checks that a request comes from the server the session is on now.
void zk_link::move_off_silent_server() {
  // Moving needs a connection to leave; while connecting, the client's own
  // limit stands.
  if (!zh_ || !connected() || fd_ < 0) return arm_silence();
  const auto silent = std::chrono::duration_cast<milliseconds>(mono_clock::now() - quiet_since_);
  post([fn = options_.on_move, server = connected_server(), silent] {
    if (fn) fn(server, silent);
  });
  ::shutdown(fd_, SHUT_RDWR);
  process(ZOOKEEPER_READ);
}

void zk_link::get(const std::string& path, node_handler done) {
  if (hand_to_client(
          *this, zh_ != nullptr, &call::node_done, std::move(done),
          [&](void* completion) { return zoo_aget(zh_, path.c_str(), 0, on_data, completion); })) {
    sent();
    pump();
  }
}

void zk_link::get_watch(const std::string& path, node_handler done) {
  if (hand_to_client(
          *this, zh_ != nullptr, &call::node_done, std::move(done), [&](void* completion) {
            return zoo_awget(zh_, path.c_str(), on_watch, watch_.get(), on_data, completion);
          })) {
    sent();
    pump();
  }
}

void zk_link::children(const std::string& path, children_handler done) {
  if (hand_to_client(*this, zh_ != nullptr, &call::children_done, std::move(done),
                     [&](void* completion) {
                       return zoo_aget_children(zh_, path.c_str(), 0, on_children, completion);
                     })) {
    sent();
    pump();
  }
}

void zk_link::children_watch(const std::string& path, children_handler done) {
  if (hand_to_client(*this, zh_ != nullptr, &call::children_done, std::move(done),
                     [&](void* completion) {
                       return zoo_awget_children(zh_, path.c_str(), on_watch, watch_.get(),
                                                 on_children, completion);
                     })) {
    sent();
    pump();
  }
}

void zk_link::exists_watch(const std::string& path, node_handler done) {
  if (hand_to_client(
          *this, zh_ != nullptr, &call::node_done, std::move(done), [&](void* completion) {
            return zoo_awexists(zh_, path.c_str(), on_watch, watch_.get(), on_stat, completion);
          })) {
    sent();
    pump();
  }
}

void zk_link::create(const std::string& path, const std::string& data, bool ephemeral,
                     node_handler done) {
  const auto* acl = options_.digest.empty() ? &ZOO_OPEN_ACL_UNSAFE : &baton_acl;
  if (hand_to_client(
          *this, zh_ != nullptr, &call::node_done, std::move(done), [&](void* completion) {
            return zoo_acreate2(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), acl,
                                ephemeral ? ZOO_EPHEMERAL : ZOO_PERSISTENT, on_created, completion);
          })) {
    sent();
    pump();
  }
}

void zk_link::multi(std::vector<zk_op> ops, multi_handler done) {
  auto c = std::make_unique<call>();
  c->link = this;
  c->multi_done = std::move(done);
  c->keep.reserve(ops.size() * 2);
  c->ops.resize(ops.size());
  c->results.resize(ops.size());
  c->stats.resize(ops.size());
  const auto* acl = options_.digest.empty() ? &ZOO_OPEN_ACL_UNSAFE : &baton_acl;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& path = c->keep.emplace_back(ops[i].path);
    const auto& data = c->keep.emplace_back(ops[i].data);
    switch (ops[i].what) {
      case zk_op::kind::create:
        zoo_create_op_init(&c->ops[i], path.c_str(), data.data(), static_cast<int>(data.size()),
                           acl, ops[i].ephemeral ? ZOO_EPHEMERAL : ZOO_PERSISTENT, nullptr, 0);
        break;
      case zk_op::kind::set:
        zoo_set_op_init(&c->ops[i], path.c_str(), data.data(), static_cast<int>(data.size()),
                        ops[i].version, &c->stats[i]);
        break;
      case zk_op::kind::remove:
        zoo_delete_op_init(&c->ops[i], path.c_str(), ops[i].version);
        break;
      case zk_op::kind::check:
        zoo_check_op_init(&c->ops[i], path.c_str(), ops[i].version);
        break;
    }
  }
  auto* raw = c.get();
  const int rc = zh_ ? zoo_amulti(zh_, static_cast<int>(raw->ops.size()), raw->ops.data(),
                                  raw->results.data(), on_multi, raw)
                     : ZINVALIDSTATE;
  if (rc != ZOK) {
    post([done = std::move(c->multi_done), rc] { done(rc, {}); });
    return;
  }
  c.release();
  sent();
  pump();
}

void zk_link::close() {
  if (closed_) return;
  closed_ = true;
  // No more state or node events; completions still run (ZCLOSING).
  watch_->alive.reset();
  alive_.reset();
  ++generation_;
  boost::system::error_code ec;
  if (descriptor_.is_open()) {
    descriptor_.cancel(ec);
    descriptor_.release();
  }
  timer_.cancel();
  silence_timer_.cancel();
  handshake_timer_.cancel();
  if (!zh_) return;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  // Pending completions run here with ZCLOSING, posted to the owner.
  zookeeper_close(zh_);
  zh_ = nullptr;
}

}  // namespace baton::zookeeper_detail
