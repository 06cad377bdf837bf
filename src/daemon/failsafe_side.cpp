// The daemon's side of peer-confirmed leadership (see failsafe_side.hpp).
#include "failsafe_side.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <random>

namespace baton {

namespace {

using peer_wire::kind;

std::string term_text(const std::string& leader, std::uint64_t token) {
  return leader + "'s term " + std::to_string(token);
}

std::string names(const std::vector<std::string>& nodes) {
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "nobody" : out;
}

// A reason the wire carries: printable ASCII, at most its limit.
std::string wire_reason(std::string text) {
  for (char& c : text) {
    if (c < ' ' || c > '~') c = '?';
  }
  if (text.size() > peer_wire::max_reason_bytes) text.resize(peer_wire::max_reason_bytes);
  return text;
}

// 128 fresh random bits in hex: a round's or a clear request's nonce.
std::string fresh_nonce() {
  std::random_device rd;
  std::string hex;
  for (int i = 0; i < 4; ++i) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned int>(rd()));
    hex += buf;
  }
  return hex;
}

long long ms_until(time_point t, time_point now) {
  return std::chrono::duration_cast<milliseconds>(t - now).count();
}

}  // namespace

bool store_unreachable(std::error_code ec) {
  return ec == store_errc::unavailable || ec == store_errc::timeout || ec == store_errc::no_quorum;
}

void recent_peers::listed(const candidate_snapshot& known, time_point now) {
  if (!known.at) return;  // never listed: nothing known
  const time_point at = std::min(*known.at, now);
  for (const auto& c : known.list) {
    if (c.node == self_ || c.node.empty()) continue;
    auto& entry = seen_[c.node];
    if (!c.peer_address.empty()) entry.address = c.peer_address;
    entry.at = std::max(entry.at, at);
  }
}

void recent_peers::answered(const std::string& node, time_point now) {
  const auto it = seen_.find(node);
  if (it != seen_.end()) it->second.at = std::max(it->second.at, now);
}

std::vector<failsafe_peer> recent_peers::list(time_point now) const {
  std::vector<failsafe_peer> out;
  for (const auto& [node, s] : seen_) {
    if (now - s.at <= horizon_) out.push_back({node, s.address});
  }
  return out;
}

failsafe_side::failsafe_side(const config& cfg, std::string secret, const election_machine& machine,
                             hooks h, time_point started)
    : cfg_(cfg),
      secret_(std::move(secret)),
      machine_(machine),
      hooks_(std::move(h)),
      timing_{cfg.lease.ttl, lease_drift(cfg.lease)},
      promises_(cfg.node_id, timing_, started),
      recent_(cfg.node_id, 2 * cfg.lease.ttl),
      lists_(cfg.node_id) {}

// --- the store's calls and answers ------------------------------------------

failsafe_acquire failsafe_side::acquire_args(const candidate_snapshot& known, time_point now) {
  failsafe_acquire a;
  a.may_win = promises_.may_take(now);
  last_may_win_ = a.may_win;
  a.cleared_token = cleared_token_;
  // A grant is a new term: its lists start again, this one numbered 1.
  lists_ = failsafe::peer_list(cfg_.node_id);
  next_seq_ = 1;
  a.list = next_list(known);
  if (auto kept = promises_.kept(now)) {
    a.promise = failsafe_promise{kept->term.leader, kept->term.token,
                                 std::chrono::ceil<milliseconds>(kept->until - now)};
  }
  return a;
}

std::optional<acquire_verdict> failsafe_side::granted(std::uint64_t token, time_point now) {
  if (!promises_.may_take(now)) {
    // F7: a promise made while the acquire was in flight (or the start's
    // ttl): the grant goes back unused.
    return acquire_verdict{true, promises_.may_take_from(),
                           "given back unused: this node keeps a promise or started less than a "
                           "ttl ago"};
  }
  lists_.acknowledged(1);
  rounds_term_ = {cfg_.node_id, token};
  rounds_.reset();
  store_away_ = false;
  round_begun_.reset();
  round_trouble_.clear();
  said_on_confirmations_ = false;
  clearance_.reset();
  promises_.saw_term(rounds_term_);
  return std::nullopt;
}

std::optional<acquire_verdict> failsafe_side::refused(const acquire_answer& a, time_point now) {
  if (a.failsafe_hold) {
    const auto& hold = *a.failsafe_hold;
    const failsafe::term_id term{hold.leader, hold.token};
    promises_.saw_term(term);
    if (!hold.leader_address.empty()) addresses_[hold.leader] = hold.leader_address;
    std::vector<std::string> peers;
    for (const auto& p : hold.peers) {
      peers.push_back(p.node);
      if (!p.address.empty()) addresses_[p.node] = p.address;
    }
    if (!clearance_ || !(clearance_->hold().term == term)) {
      clearance_.emplace(cfg_.node_id, failsafe::failsafe_hold{term, peers});
      spdlog::info("failsafe hold: {} may still run on its peers' confirmations; it must be "
                   "cleared before this node takes the lease",
                   term_text(term.leader, term.token));
    }
    const auto step = clearance_->next(promises_, now);
    if (const auto* take = std::get_if<failsafe::clearance::take>(&step)) {
      cleared_token_ = std::max(cleared_token_, take->cleared_token);
      return acquire_verdict{false, now, "cleared " + term_text(term.leader, term.token)};
    }
    if (const auto* ask = std::get_if<failsafe::clearance::ask>(&step)) {
      ask_to_clear(ask->whom, now);
      return acquire_verdict{false, now + cfg_.lease.retry_interval,
                             "failsafe hold: asking " + names(ask->whom) + " to clear " +
                                 term_text(term.leader, term.token)};
    }
    const auto& wait = std::get<failsafe::clearance::wait>(step);
    return acquire_verdict{false, wait.until, "failsafe hold: " + wait.why};
  }
  if (!last_may_win_ && a.outcome == acquire_outcome::held_back && a.holder.empty()) {
    // A register-only attempt on a free lease (F7).
    return acquire_verdict{false, promises_.may_take_from(),
                           "this node keeps a promise or started less than a ttl ago"};
  }
  if (a.outcome == acquire_outcome::held && !a.holder.empty() && a.token > 0) {
    saw_term(a.holder, a.token);
  }
  return std::nullopt;
}

void failsafe_side::saw_term(const std::string& leader, std::uint64_t token) {
  if (leader.empty() || token == 0) return;
  promises_.saw_term({leader, token});
}

failsafe_list failsafe_side::next_list(const candidate_snapshot& known) {
  const auto now = hooks_.now();
  recent_.listed(known, now);
  failsafe_list list{next_seq_++, recent_.list(now)};
  std::vector<std::string> ids;
  for (const auto& p : list.peers) {
    ids.push_back(p.node);
    if (!p.address.empty()) addresses_[p.node] = p.address;
  }
  lists_.sent(list.seq, std::move(ids));
  return list;
}

void failsafe_side::written(std::uint64_t seq, time_point now) {
  lists_.acknowledged(seq);
  if (rounds_ && rounds_->on_confirmations_since()) {
    spdlog::info("the store answers again: leading on its renewals after {} ms on peer "
                 "confirmations",
                 ms_until(now, *rounds_->on_confirmations_since()));
  }
  rounds_.reset();
  store_away_ = false;
  round_begun_.reset();
  round_trouble_.clear();
  said_on_confirmations_ = false;
  shortfall_said_.clear();
}

void failsafe_side::renew_failed(const store_error& e, time_point now) {
  if (!store_unreachable(e.code)) {
    // The store answered: no rounds stand in for it (F3).
    if (rounds_) {
      spdlog::warn("no more rounds of confirmations: the store answered ({})", e.message());
    }
    rounds_.reset();
    store_away_ = false;
    return;
  }
  store_away_ = true;
  if (!leads_now()) return;
  if (!rounds_) {
    rounds_.emplace(rounds_term_, timing_, machine_.valid_until());
    round_begun_.reset();
  }
  if (!round_begun_) {
    spdlog::info("the store cannot be reached ({}): asking the listed peers to confirm {}",
                 e.message(), term_text(rounds_term_.leader, rounds_term_.token));
    begin_round(now);
  }
}

bool failsafe_side::resume_instead(time_point now) {
  return rounds_ && leads_now() && !rounds_->over(now);
}

void failsafe_side::resume_lost() {
  rounds_.reset();
  store_away_ = false;
}

// --- rounds --------------------------------------------------------------------

bool failsafe_side::leads_now() const {
  return machine_.believes_leading() && rounds_term_.token != 0 &&
         machine_.term_token() == rounds_term_.token;
}

milliseconds failsafe_side::request_timeout() const {
  return std::max(cfg_.lease.renew_interval / 2, milliseconds(50));
}

std::string failsafe_side::address_of(const std::string& node) const {
  const auto it = addresses_.find(node);
  return it == addresses_.end() ? std::string() : it->second;
}

std::string failsafe_side::signed_line(const peer_wire::message& m) const {
  auto encoded = peer_wire::encode(m, secret_);
  if (encoded.line.empty()) spdlog::error("peer port: cannot sign a message: {}", encoded.error);
  return encoded.line;
}

peer_wire::message failsafe_side::request_to(kind what, const std::string& to,
                                             const failsafe::term_id& term, time_point now) const {
  peer_wire::message m;
  m.what = what;
  m.election = cfg_.election;
  m.from = cfg_.node_id;
  m.to = to;
  m.leader = term.leader;
  m.token = term.token;
  m.nonce = fresh_nonce();
  m.sent_ms = failsafe::wire_ms(now);
  return m;
}

void failsafe_side::on_round_due(time_point now) {
  if (!store_away_ || !rounds_) return;
  note_round_shortfall();
  begin_round(now);
}

void failsafe_side::note_round_shortfall() {
  if (!rounds_ || rounds_->round_asked() == 0 ||
      rounds_->round_confirmed() == rounds_->round_asked()) {
    return;
  }
  std::string why;
  for (const auto& [peer, trouble] : round_trouble_) {
    why += (why.empty() ? "" : "; ") + peer + ": " + trouble;
  }
  if (why.empty() && !rounds_->last_refusal().empty()) why = rounds_->last_refusal();
  if (why.empty()) why = "no answer in time";
  const std::string line = "a round of confirmations did not count: " +
                           std::to_string(rounds_->round_confirmed()) + " of " +
                           std::to_string(rounds_->round_asked()) + " peers confirmed (" + why + ")";
  if (line == shortfall_said_) return;
  shortfall_said_ = line;
  spdlog::warn("{}", line);
}

void failsafe_side::begin_round(time_point now) {
  if (!rounds_ || !leads_now()) {
    rounds_.reset();
    return;
  }
  round_trouble_.clear();
  const auto requests = rounds_->begin_round(lists_, fresh_nonce(), now);
  if (requests.empty()) {
    if (rounds_->over(now)) {
      rounds_.reset();
      return;
    }
    if (!round_begun_) {
      spdlog::warn("cannot lead on peer confirmations: a list the store may hold names no peer");
    }
    round_begun_ = now;
    hooks_.arm_round(now + cfg_.lease.renew_interval);
    return;
  }
  round_begun_ = now;
  hooks_.arm_round(now + cfg_.lease.renew_interval);
  for (const auto& r : requests) {
    peer_wire::message m = request_to(kind::confirm, r.peer, r.term, now);
    m.nonce = r.nonce;
    m.sent_ms = r.sent_ms;
    const std::string address = address_of(r.peer);
    if (address.empty()) {
      round_trouble_[r.peer] = "no peer address registered";
      continue;
    }
    std::string line = signed_line(m);
    if (line.empty()) continue;
    hooks_.send(address, std::move(line), request_timeout(),
                [this, peer = r.peer, m](std::string error, std::string body) {
                  on_confirm_answer(peer, m, error, body);
                });
  }
}

void failsafe_side::on_confirm_answer(const std::string& peer, const peer_wire::message& request,
                                      const std::string& error, const std::string& body) {
  if (!rounds_) return;
  if (!error.empty()) {
    round_trouble_[peer] = error;
    return;
  }
  const auto answer = peer_wire::decode(body, secret_, cfg_.election, cfg_.node_id);
  if (!answer.msg) {
    round_trouble_[peer] = "its answer was refused: " + answer.error;
    return;
  }
  if (!peer_wire::answers(request, *answer.msg)) {
    round_trouble_[peer] = "its answer does not answer the request";
    return;
  }
  const auto now = hooks_.now();
  const auto& m = *answer.msg;
  recent_.answered(peer, now);
  if (m.what == kind::refused) {
    rounds_->refused(peer, m.nonce, m.sent_ms, m.reason);
    round_trouble_[peer] = "refused: " + m.reason;
    return;
  }
  if (m.what != kind::confirmed) return;
  const auto outcome = rounds_->confirmed(peer, m.nonce, m.sent_ms, milliseconds(m.ms), now);
  if (outcome == failsafe::confirmation_rounds::outcome::short_promise) {
    round_trouble_[peer] = "it promised " + std::to_string(m.ms) + " ms, less than this ttl";
  }
  if (outcome != failsafe::confirmation_rounds::outcome::round_complete) return;
  ++rounds_counted_;
  shortfall_said_.clear();
  const auto deadline = rounds_->deadline();
  if (!said_on_confirmations_ && deadline > machine_.valid_until()) {
    said_on_confirmations_ = true;
    spdlog::warn("leading on peer confirmations: {} of {} peers confirmed {}; the app may run "
                 "{} ms more",
                 rounds_->round_confirmed(), rounds_->round_asked(),
                 term_text(rounds_term_.leader, rounds_term_.token), ms_until(deadline, now));
  } else if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("round of confirmations counted: {} of {} peers; the app may run {} ms more",
                  rounds_->round_confirmed(), rounds_->round_asked(), ms_until(deadline, now));
  }
  hooks_.post(events::confirmed{*rounds_->last_counted(), deadline});
}

void failsafe_side::ask_to_clear(const std::vector<std::string>& whom, time_point now) {
  const auto term = clearance_->hold().term;
  for (const auto& node : whom) {
    const std::string address = address_of(node);
    if (address.empty()) continue;
    const auto m = request_to(kind::clear, node, term, now);
    std::string line = signed_line(m);
    if (line.empty()) continue;
    hooks_.send(address, std::move(line), request_timeout(),
                [this, m](std::string error, std::string body) { on_clear_answer(m, error, body); });
  }
}

void failsafe_side::on_clear_answer(const peer_wire::message& request, const std::string& error,
                                    const std::string& body) {
  if (!clearance_ || !(clearance_->hold().term == failsafe::term_id{request.leader, request.token})) {
    return;
  }
  if (!error.empty()) {
    spdlog::debug("clear request to {}: {}", request.to, error);
    return;
  }
  const auto answer = peer_wire::decode(body, secret_, cfg_.election, cfg_.node_id);
  if (!answer.msg || !peer_wire::answers(request, *answer.msg)) {
    spdlog::warn("clear request to {}: its answer was refused: {}", request.to,
                 answer.msg ? "it does not answer the request" : answer.error);
    return;
  }
  const auto& m = *answer.msg;
  if (m.what == kind::cleared) {
    clearance_->cleared_by(request.to);
    spdlog::info("{} cleared {}: this node may take the lease",
                 request.to, term_text(request.leader, request.token));
    // Worth trying now rather than at the next retry.
    hooks_.post(events::peer_released{});
  } else if (m.what == kind::held) {
    clearance_->held_by(request.to, milliseconds(m.ms), hooks_.now());
    spdlog::debug("{} holds {} for {} ms more: {}", request.to,
                  term_text(request.leader, request.token), m.ms, m.reason);
  }
}

// --- the peer port ---------------------------------------------------------------

std::optional<time_point> failsafe_side::own_app_until() const {
  const auto s = machine_.current();
  if (s == state::working || s == state::renewing) return machine_.valid_until();
  if (s == state::pausing) return std::max(machine_.valid_until(), machine_.kill_deadline());
  return std::nullopt;
}

peer_answer failsafe_side::on_request(std::string_view body, time_point now) {
  const auto decoded = peer_wire::decode(body, secret_, cfg_.election, cfg_.node_id);
  if (!decoded.msg) return {"", decoded.error};
  const auto& m = *decoded.msg;
  if (!peer_wire::is_request(m.what)) {
    return {"", "a " + std::string(peer_wire::kind_name(m.what)) + " is an answer, not a request"};
  }
  peer_wire::message reply;
  reply.election = m.election;
  reply.from = cfg_.node_id;
  reply.to = m.from;
  reply.leader = m.leader;
  reply.token = m.token;
  reply.nonce = m.nonce;
  reply.sent_ms = m.sent_ms;
  const failsafe::term_id term{m.leader, m.token};
  if (m.what == kind::confirm) {
    if (m.from != m.leader) {
      return {"", "a confirm request from " + m.from + " for " + m.leader + "'s term"};
    }
    const bool self_leads = machine_.holds_lease() || machine_.current() == state::pausing;
    const auto answer = promises_.on_confirm(term, m.sent_ms, now, self_leads);
    if (answer.confirmed) {
      reply.what = kind::confirmed;
      reply.ms = static_cast<std::uint64_t>(answer.promise.count());
      if (!(confirmed_said_ == term)) {
        confirmed_said_ = term;
        spdlog::info("confirmed {}: this node takes no lease for {} ms after each confirmation",
                     term_text(term.leader, term.token), answer.promise.count());
      }
    } else {
      reply.what = kind::refused;
      reply.reason = wire_reason(answer.reason);
      spdlog::debug("refused to confirm {}: {}", term_text(term.leader, term.token), answer.reason);
    }
  } else {
    const auto answer = promises_.on_clear(term, now, own_app_until());
    if (answer.cleared) {
      reply.what = kind::cleared;
      spdlog::info("cleared {} for {}: this node will not confirm it again",
                   term_text(term.leader, term.token), m.from);
    } else {
      reply.what = kind::held;
      reply.ms = static_cast<std::uint64_t>(std::max<long long>(answer.remaining.count(), 1));
      reply.reason = wire_reason(answer.reason);
    }
  }
  std::string line = signed_line(reply);
  if (line.empty()) return {"", "this node cannot sign its answer"};
  return {std::move(line), ""};
}

// --- what operators see ------------------------------------------------------------

nlohmann::json failsafe_side::report(time_point now) const {
  nlohmann::json j{{"mode", "peers"},
                   {"peer_address", cfg_.lease.failsafe_address.empty()
                                        ? cfg_.lease.failsafe_listen
                                        : cfg_.lease.failsafe_address}};
  const bool on = rounds_ && rounds_->on_confirmations_since().has_value();
  j["on_confirmations"] = on;
  if (rounds_) {
    if (on) {
      j["on_confirmations_for_ms"] = ms_until(now, *rounds_->on_confirmations_since());
    }
    j["round_confirmed"] = rounds_->round_confirmed();
    j["round_asked"] = rounds_->round_asked();
    if (!rounds_->last_refusal().empty()) j["last_refusal"] = rounds_->last_refusal();
    if (!round_trouble_.empty()) {
      auto& trouble = j["round_trouble"] = nlohmann::json::object();
      for (const auto& [peer, why] : round_trouble_) trouble[peer] = why;
    }
  }
  j["rounds_counted"] = rounds_counted_;
  if (const auto kept = promises_.kept(now)) {
    j["promise"] = {{"leader", kept->term.leader},
                    {"token", kept->term.token},
                    {"remaining_ms", ms_until(kept->until, now)}};
  }
  if (!promises_.may_take(now)) j["may_take_in_ms"] = ms_until(promises_.may_take_from(), now);
  if (clearance_) {
    j["clearing"] = {{"leader", clearance_->hold().term.leader},
                     {"token", clearance_->hold().term.token}};
  }
  j["refused_requests"] = port_refusals_;
  return j;
}

metrics::failsafe_gauges failsafe_side::gauges(time_point now) const {
  metrics::failsafe_gauges g;
  g.on_confirmations = rounds_ && rounds_->on_confirmations_since().has_value();
  if (rounds_) {
    g.round_confirmed = rounds_->round_confirmed();
    g.round_asked = rounds_->round_asked();
  }
  g.rounds_counted = rounds_counted_;
  if (const auto kept = promises_.kept(now)) {
    g.promise_seconds = std::chrono::duration<double>(kept->until - now).count();
  }
  g.refused_requests = port_refusals_;
  return g;
}

}  // namespace baton
