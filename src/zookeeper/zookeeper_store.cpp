// zookeeper_store: the protocol of lease_nodes.hpp over one session
// (zk_link.hpp) at a time. Every public call is an `op` that completes once:
// by its own steps, by its deadline (connect_timeout + command_timeout), or
// aborted by close(); a call that needs a session waits for one (up to
// connect_timeout), across a replaced session too. Each session registers
// the store once (an ephemeral node under <election>/candidates), on the
// first acquire or renewal that runs on it; an acquire reads the registry's
// names too, in its own round trip, when its children watch fired since the
// last read.
//
// This file: the store made (its options checked, the password read), the
// frame every call runs in, close() and status() with a row per server. The
// other steps are in a file per job (zookeeper_store_impl.hpp lists them).
#include "zookeeper_store.hpp"

#include <boost/asio/post.hpp>
#include <fstream>
#include <stdexcept>
#include <utility>

#include "server_list.hpp"
#include "store/nonce.hpp"
#include "zookeeper_on_demand.hpp"
#include "zookeeper_store_impl.hpp"

namespace baton {
namespace {

std::string read_password(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::invalid_argument("zookeeper_store: cannot read the password file " + file);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty())
    throw std::invalid_argument("zookeeper_store: the password file " + file + " is empty");
  return line;
}

}  // namespace

zookeeper_store::impl::impl(asio::io_context& context, zookeeper_store_options opts,
                            std::vector<server_address> list, std::string credentials)
    : io(context),
      options(std::move(opts)),
      shell(context),
      paths(make_paths(options.path, options.identity.election)),
      nonce(store_detail::new_nonce()),
      servers(std::move(list)),
      digest(std::move(credentials)),
      lost_timer(context),
      expiry_timer(context) {
  bool all_numeric = true;
  for (const auto& s : servers) all_numeric = all_numeric && s.numeric;
  if (all_numeric) {
    numeric_hosts = client_hosts(servers);
    for (std::size_t i = 0; i < servers.size(); ++i) addresses.push_back({servers[i], i});
  }
  server_errors.resize(servers.size());
}

zookeeper_store::impl::~impl() {
  shell.retire();
  drop_link();
}

// Keeps a failure for status(), and for the row of the server the session
// is on (a failure while no server holds the session is the store's only:
// the client tries the servers in turn, which one failed is unknown).
store_error zookeeper_store::impl::note_failure(store_error e) {
  if (server_in_use) server_errors[*server_in_use] = e.message();
  return shell.note_failure(std::move(e));
}

// Runs `fn` on the loop later, unless the store is gone by then.
void zookeeper_store::impl::later(std::function<void()> fn) {
  asio::post(io, [w = shell.guard(), fn = std::move(fn)] {
    if (!w.expired()) fn();
  });
}

zookeeper_store::zookeeper_store(asio::io_context& io, zookeeper_store_options options) {
  auto& id = options.identity;
  require_valid_identity(id, "zookeeper_store");
  if (const auto missing = zookeeper_client_load_error()) {
    throw std::invalid_argument("zookeeper_store: the ZooKeeper C client is needed: " + *missing);
  }
  if (const auto p = election_name_problem(id.election)) {
    throw std::invalid_argument("zookeeper_store: election \"" + id.election + "\" " + *p);
  }
  if (const auto p = path_prefix_problem(options.path)) {
    throw std::invalid_argument("zookeeper_store: path \"" + options.path + "\" " + *p);
  }
  auto list = parse_servers(options.servers);
  if (!list.error.empty()) throw std::invalid_argument("zookeeper_store: servers: " + list.error);
  if (options.connect_timeout.count() <= 0 || options.command_timeout.count() <= 0) {
    throw std::invalid_argument("zookeeper_store: connect_timeout and command_timeout must be > 0");
  }
  std::string digest;
  if (options.auth_scheme == "digest") {
    if (options.auth_user.empty() || options.auth_user.find(':') != std::string::npos) {
      throw std::invalid_argument(
          "zookeeper_store: digest authentication needs a user without ':'");
    }
    if (options.password_file.empty()) {
      throw std::invalid_argument("zookeeper_store: digest authentication needs a password file");
    }
    digest = options.auth_user + ":" + read_password(options.password_file);
  } else if (!options.auth_scheme.empty()) {
    throw std::invalid_argument("zookeeper_store: auth scheme \"" + options.auth_scheme +
                                "\" is not supported (\"digest\" or none)");
  }
  impl_ =
      std::make_unique<impl>(io, std::move(options), std::move(list.servers), std::move(digest));
}

zookeeper_store::~zookeeper_store() = default;

const store_identity& zookeeper_store::identity() const {
  return impl_->options.identity;
}

void zookeeper_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  for (auto& w : d.ops) {
    if (auto o = w.lock()) d.later([o] { o->abort(); });
  }
  d.ops.clear();
  for (auto& w : d.waiters) w.timer->cancel();
  d.waiters.clear();
  d.lost_timer.cancel();
  d.drop_link();
  d.expiry_timer.cancel();
}

store_status zookeeper_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "zookeeper";
  s.label = "ZooKeeper";
  s.endpoint = d.where();
  if (d.link && d.session_up && d.link->connected()) {
    s.link = link_state::connected;
  } else if ((d.link || d.resolving) && !d.shell.closed()) {
    s.link = link_state::connecting;
  } else {
    s.link = link_state::disconnected;
  }
  s.wakeups = d.current_wakeups();
  d.shell.fill_status(s);
  // One row per server, from what the session already knows: the one it is
  // on is connected; while the client looks for one, it tries each in turn
  // (connecting); the others have no connection. The server's mode would
  // take a request (srvr) that a standby does not make: the role is
  // "server".
  for (std::size_t i = 0; i < d.servers.size(); ++i) {
    store_member_status m;
    m.endpoint = client_hosts({d.servers[i]});
    m.role = "server";
    if (s.link == link_state::connected && d.server_in_use == i) {
      m.link = link_state::connected;
    } else if (s.link == link_state::connecting) {
      m.link = link_state::connecting;
    }
    m.last_error = d.server_errors[i];
    s.members.push_back(std::move(m));
  }
  return s;
}

}  // namespace baton
