// etcd_store: each call a short chain of gateway requests on one
// http_client; every completion passes through `request`, which drops it
// when the store is gone, turns it into operation_aborted once close() was
// called, and keeps failures for status(). Every answer's header goes
// through the token floor (election_keys.hpp), which finds a restore.
//
// This file: the connection settings checked, the store made, what every
// answer's header says about the data (the token floor), close() and
// status() with a row per endpoint. The other steps are in a file per job
// (etcd_store_impl.hpp lists them).
#include "etcd_store.hpp"

#include <boost/asio/post.hpp>
#include <optional>
#include <stdexcept>
#include <utility>
#include <variant>

#include "endpoint.hpp"
#include "etcd_store_impl.hpp"
#include "store/nonce.hpp"
#include "tls.hpp"

namespace baton {

namespace etcd_detail {

namespace {

std::vector<endpoint> parse_endpoints(const std::vector<std::string>& urls) {
  if (urls.empty()) throw std::invalid_argument("etcd_store: no endpoint");
  std::vector<endpoint> out;
  for (const auto& url : urls) {
    auto parsed = parse_endpoint(url);
    if (const auto* problem = std::get_if<std::string>(&parsed)) {
      throw std::invalid_argument("etcd_store: endpoint: " + *problem);
    }
    out.push_back(std::get<endpoint>(std::move(parsed)));
  }
  for (const auto& ep : out) {
    if (ep.scheme != out.front().scheme) {
      throw std::invalid_argument("etcd_store: the endpoints mix http:// and https://");
    }
  }
  return out;
}

}  // namespace

// The connection settings: endpoints, timeouts, TLS (for https endpoints
// only) and the user. Throws std::invalid_argument naming what is wrong.
http_options connection_options(const etcd_store_options& o) {
  http_options h;
  h.endpoints = parse_endpoints(o.endpoints);
  h.connect_timeout = o.connect_timeout;
  h.command_timeout = o.command_timeout;
  const bool tls_files =
      !o.tls_ca_file.empty() || !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  if (h.endpoints.front().scheme == "https") {
    std::string error;
    h.tls = make_tls_context({o.tls_ca_file, o.tls_cert_file, o.tls_key_file}, error);
    if (!h.tls) throw std::invalid_argument("etcd_store: TLS: " + error);
  } else if (tls_files) {
    throw std::invalid_argument(
        "etcd_store: TLS files are given but the endpoints are http://; use https://");
  }
  if (o.username.empty() != o.password_file.empty()) {
    throw std::invalid_argument(
        "etcd_store: a user needs a password file, and a password file a user");
  }
  h.username = o.username;
  h.password_file = o.password_file;
  return h;
}

}  // namespace etcd_detail

etcd_store::impl::impl(asio::io_context& context, etcd_store_options opts)
    : io(context),
      options(std::move(opts)),
      shell(context),
      keys(options.prefix, options.identity.election),
      // New per store: a restarted daemon with the same node id never
      // renews its predecessor's term.
      own_value(lease_value(options.identity.node_id, store_detail::new_nonce())),
      seconds(lease_seconds(options.identity.ttl)),
      clock(2 * options.identity.ttl),
      run(2 * options.identity.ttl),
      tail_timer(context),
      retry_timer(context),
      ping_timer(context) {
  auto connection = connection_options(options);
  endpoint_errors.resize(connection.endpoints.size());
  // A member's last error stands until it answers again.
  connection.on_outcome = [this, weak = shell.guard()](std::size_t at, const store_error& e) {
    if (weak.expired()) return;
    if (at < endpoint_errors.size()) endpoint_errors[at] = e ? e.message() : "";
    if (e) watch_where_the_calls_are();
  };
  client = http_client::create(io, std::move(connection));
  backoff = options.rewatch_backoff_initial;
}

etcd_store::impl::~impl() {
  shell.retire();
  client->close();
  if (stream) stream->stop();
  retry_timer.cancel();
  ping_timer.cancel();
  tail_timer.cancel();
}

// A request whose answer nobody waits for (revoking an unused lease).
void etcd_store::impl::forget(std::string path, std::string body) {
  client->post(std::move(path), std::move(body), [](store_error, json) {});
}

void etcd_store::impl::heard(const std::optional<token_floor::finding>& f) {
  if (!f) return;
  if (f->must_fence) {
    pending_fence = f;
    term.reset();  // a term from before the data went back is over
    clock.clear();  // revisions from before it say nothing of later ones
    run.lost();     // the registration may have gone back with the data
  }
  shell.note_reset(f->why);
  // Told from the executor, not from inside the answer being read: the
  // listener may destroy the store.
  asio::post(
      io, [this, weak = shell.guard(), r = store_events::reset{f->why, f->record_missing, {}}] {
        if (!weak.expired()) shell.emit(r);
      });
}

void etcd_store::impl::seen(const header& h) {
  heard(floor.observe_header(h));
  clock.observe(h.revision, mono_clock::now());
}

// A txn's header, the txn sent when floor.revision_seen() was `known`.
void etcd_store::impl::seen_txn(const header& h, std::int64_t known) {
  heard(floor.observe_linearizable_header(h, known));
  clock.observe(h.revision, mono_clock::now());
}

// A watch message's header (token_floor::observe_stream_header).
void etcd_store::impl::seen_on_stream(const header& h) {
  heard(floor.observe_stream_header(h));
  clock.observe(h.revision, mono_clock::now());
}

etcd_store::etcd_store(asio::io_context& io, etcd_store_options options) {
  require_valid_identity(options.identity, "etcd_store");
  if (options.prefix.empty()) throw std::invalid_argument("etcd_store: the key prefix is empty");
  impl_ = std::make_unique<impl>(io, std::move(options));
}

etcd_store::~etcd_store() = default;

const store_identity& etcd_store::identity() const {
  return impl_->options.identity;
}

store_status etcd_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "etcd";
  s.label = "etcd";
  std::string endpoints;
  for (const auto& url : d.options.endpoints) {
    auto parsed = parse_endpoint(url);
    if (const auto* ep = std::get_if<endpoint>(&parsed)) {
      endpoints += (endpoints.empty() ? "" : ",") + ep->redacted();
    }
  }
  s.endpoint = endpoints + " prefix " + d.keys.dir;
  s.wakeups = d.watching ? d.watch_state : wakeup_state::off;
  d.shell.fill_status(s);
  // One row per endpoint: connected while the calls' connection or the
  // watch stream is open to it, connecting while one of them is being
  // opened; the others have no connection (the store uses one member at a
  // time, and the watch follows the calls when they move on). The store's
  // own link is the best of the two connections: a watch open alone is a
  // connection to etcd too.
  const auto& all = d.client->options().endpoints;
  const bool stream_open = d.stream && d.watching && !d.shell.closed();
  const auto calls = d.client->state();
  const auto watch = !stream_open                                  ? link_state::disconnected
                     : d.watch_state == wakeup_state::subscribed ? link_state::connected
                     : d.watch_state == wakeup_state::connecting ? link_state::connecting
                                                                 : link_state::disconnected;
  const auto best = [](link_state a, link_state b) {
    if (a == link_state::connected || b == link_state::connected) return link_state::connected;
    if (a == link_state::connecting || b == link_state::connecting) return link_state::connecting;
    return link_state::disconnected;
  };
  s.link = best(calls, watch);
  for (std::size_t i = 0; i < all.size(); ++i) {
    store_member_status m;
    m.endpoint = all[i].redacted();
    m.role = "endpoint";
    const bool calls_here = d.client->current_index() == i;
    const bool watch_here = stream_open && d.watch_at == i;
    m.link = best(calls_here ? calls : link_state::disconnected,
                  watch_here ? watch : link_state::disconnected);
    m.last_error = i < d.endpoint_errors.size() ? d.endpoint_errors[i] : "";
    s.members.push_back(std::move(m));
  }
  return s;
}

void etcd_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  d.client->close();
  if (d.stream) d.stream->stop();
  d.retry_timer.cancel();
  d.ping_timer.cancel();
  d.tail_timer.cancel();
}

}  // namespace baton
