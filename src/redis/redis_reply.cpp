// Parsing of the Lua scripts' replies into lease_store answers. Each function
// checks the exact shape the script returns; anything else becomes
// unexpected_reply (or the server's error) with a detail naming what came.
#include "redis_reply.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "redis_error.hpp"

namespace baton {
namespace {

template <typename T>
parsed_reply<T> failure(std::error_code ec, std::string detail) {
  parsed_reply<T> r;
  r.ec = ec;
  r.detail = std::move(detail);
  return r;
}

template <typename T>
parsed_reply<T> unexpected(std::string_view what, const redis_reply& reply) {
  return failure<T>(redis_errc::unexpected_reply,
                    std::string(what) + ": unexpected reply " + describe_reply(reply));
}

template <typename T>
parsed_reply<T> server_error(std::string_view what, const redis_reply& reply) {
  return failure<T>(classify_error_reply(reply.str), std::string(what) + ": " + reply.str);
}

// Accepts a decimal string or an integer reply; "" means "no token yet" (0).
bool token_from(const redis_reply& r, std::uint64_t& out) {
  if (r.kind == redis_reply::type::integer) {
    if (r.integer < 0) return false;
    out = static_cast<std::uint64_t>(r.integer);
    return true;
  }
  if (r.kind != redis_reply::type::string) return false;
  if (r.str.empty()) {
    out = 0;
    return true;
  }
  const char* first = r.str.data();
  const char* last = first + r.str.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

// Both the renew and release scripts answer a bare 0 or 1.
parsed_reply<bool> parse_flag(std::string_view what, const redis_reply& reply) {
  if (reply.kind == redis_reply::type::error) return server_error<bool>(what, reply);
  if (reply.kind != redis_reply::type::integer || (reply.integer != 0 && reply.integer != 1))
    return unexpected<bool>(what, reply);
  parsed_reply<bool> r;
  r.value = reply.integer == 1;
  return r;
}

// parse_flag's 1 or 0 as one of two answers.
template <typename T>
parsed_reply<T> flag_as(std::string_view what, const redis_reply& reply, T one, T zero) {
  auto flag = parse_flag(what, reply);
  parsed_reply<T> r;
  r.ec = flag.ec;
  r.detail = std::move(flag.detail);
  r.value = flag.value ? one : zero;
  return r;
}

}  // namespace

std::string quoted_excerpt(std::string_view s) {
  constexpr std::size_t max_quoted = 64;
  std::string out = "\"";
  out.append(s.substr(0, max_quoted));
  if (s.size() > max_quoted) out += "...";
  out += '"';
  return out;
}

std::string describe_reply(const redis_reply& reply) {
  switch (reply.kind) {
    case redis_reply::type::nil:
      return "nil";
    case redis_reply::type::string:
      return "string " + quoted_excerpt(reply.str);
    case redis_reply::type::status:
      return "status " + quoted_excerpt(reply.str);
    case redis_reply::type::error:
      return "error " + quoted_excerpt(reply.str);
    case redis_reply::type::integer:
      return "integer " + std::to_string(reply.integer);
    case redis_reply::type::array:
      return "array[" + std::to_string(reply.elements.size()) + "]";
  }
  return "?";
}

std::error_code classify_error_reply(std::string_view message) {
  if (message.starts_with("NOAUTH") || message.starts_with("WRONGPASS"))
    return redis_errc::auth_failed;
  // A refusal by the user's ACL: directly, or inside a script (where Redis
  // words it differently and our scripts append the command's name).
  if (message.starts_with("NOPERM") || message.find("can't run this command") != std::string_view::npos ||
      message.find("No permissions to access") != std::string_view::npos ||
      message.find("can't access at least one of the") != std::string_view::npos)
    return redis_errc::permission_denied;
  return redis_errc::server_error;
}

bool is_noscript_error(const redis_reply& reply) {
  return reply.kind == redis_reply::type::error && reply.str.starts_with("NOSCRIPT");
}

namespace {

// {0, value, -1, counter, "failsafe", token, leader address, n, n times node
// and address}, maybe followed by "outranked", m: a failsafe hold.
parsed_reply<acquire_script_reply> parse_failsafe_hold(const redis_reply& reply) {
  constexpr std::string_view what = "acquire";
  using type = redis_reply::type;
  using result = acquire_script_reply;
  const auto& e = reply.elements;
  parsed_reply<result> r;
  auto& answer = r.value.answer;
  failsafe_hold_info hold;
  if (e[1].kind != type::string || e[1].str.empty() || !token_from(e[3], answer.token) ||
      !token_from(e[5], hold.token) || hold.token == 0 || e[6].kind != type::string ||
      e[7].kind != type::integer || e[7].integer < 0)
    return unexpected<result>(what, reply);
  const auto peers = static_cast<std::size_t>(e[7].integer);
  const std::size_t end = 8 + 2 * peers;
  if (e.size() != end && e.size() != end + 2) return unexpected<result>(what, reply);
  for (std::size_t i = 8; i < end; i += 2) {
    if (e[i].kind != type::string || e[i].str.empty() || e[i + 1].kind != type::string)
      return unexpected<result>(what, reply);
    hold.peers.push_back({e[i].str, e[i + 1].str == "-" ? std::string() : e[i + 1].str});
  }
  if (e.size() == end + 2) {
    if (e[end].kind != type::string || e[end].str != "outranked" ||
        e[end + 1].kind != type::integer || e[end + 1].integer < 0)
      return unexpected<result>(what, reply);
    answer.outranked_by = static_cast<int>(
        std::min<long long>(e[end + 1].integer, std::numeric_limits<int>::max()));
  }
  hold.leader = holder_from_value(e[1].str);
  hold.leader_address = e[6].str == "-" ? std::string() : e[6].str;
  answer.outcome = acquire_outcome::held_back;
  answer.why = "failsafe hold: " + hold.leader + "'s term " + std::to_string(hold.token) +
               " may still run on its peers' confirmations";
  answer.failsafe_hold = std::move(hold);
  return r;
}

}  // namespace

parsed_reply<acquire_script_reply> parse_acquire_reply(const redis_reply& reply) {
  constexpr std::string_view what = "acquire";
  using type = redis_reply::type;
  using result = acquire_script_reply;
  if (reply.kind == type::error) return server_error<result>(what, reply);
  if (reply.kind != type::array || reply.elements.empty() ||
      reply.elements[0].kind != type::integer)
    return unexpected<result>(what, reply);
  const auto& e = reply.elements;
  if (e[0].integer == 0 && e.size() >= 8 && e[4].kind == type::string && e[4].str == "failsafe") {
    return parse_failsafe_hold(reply);
  }
  if (e[0].integer == 0 && e.size() >= 6 && e[e.size() - 2].kind == type::string &&
      e[e.size() - 2].str == "outranked") {
    // {..., "outranked", n} ends a refusal: the live candidates, but the
    // holder and this one, of a higher priority.
    if (e.back().kind != type::integer || e.back().integer < 0)
      return unexpected<result>(what, reply);
    auto refusal = reply;
    refusal.elements.resize(e.size() - 2);
    auto parsed = parse_acquire_reply(refusal);
    if (!parsed.ec) {
      parsed.value.answer.outranked_by =
          static_cast<int>(std::min<long long>(e.back().integer, std::numeric_limits<int>::max()));
    }
    return parsed;
  }
  parsed_reply<result> r;
  auto& answer = r.value.answer;
  if (e[0].integer == 1) {
    // {1, token} or {1, token, needed, announce}: the token of a fresh term
    // is never 0, and a requirement is at least one replica.
    if ((e.size() != 2 && e.size() != 4) || e[1].kind != type::integer || e[1].integer <= 0)
      return unexpected<result>(what, reply);
    if (e.size() == 4) {
      if (e[2].kind != type::integer || e[2].integer < 1 || e[3].kind != type::integer)
        return unexpected<result>(what, reply);
      r.value.replicas_needed = static_cast<int>(e[2].integer);
      r.value.announce = e[3].integer == 1;
    }
    answer.outcome = acquire_outcome::acquired;
    answer.token = static_cast<std::uint64_t>(e[1].integer);
    return r;
  }
  if (e.size() == 8 && e[4].kind == type::string && e[4].str.empty()) {
    // {0, holder, pttl, token, '', free_in_us, count, "front" | "back"}: a
    // large election's front runner (count: the front runners and the
    // holder) or back runner (count: every listening candidate).
    if (e[7].kind != type::string || (e[7].str != "front" && e[7].str != "back"))
      return unexpected<result>(what, reply);
    auto without_runner = reply;
    without_runner.elements.pop_back();
    auto held = parse_acquire_reply(without_runner);
    if (!held.ec) held.value.answer.back_runner = e[7].str == "back";
    return held;
  }
  if (e.size() == 7 && e[4].kind == type::string && e[4].str != "replicas") {
    // {0, holder, pttl, token, '', free_in_us, listening}: held, with the
    // number of candidates listening for the election's announcements.
    if (e[6].kind != type::integer || e[6].integer < 0) return unexpected<result>(what, reply);
    auto without_count = reply;
    without_count.elements.pop_back();
    auto held = parse_acquire_reply(without_count);
    if (!held.ec) {
      held.value.answer.contenders =
          static_cast<int>(std::min<long long>(e[6].integer, std::numeric_limits<int>::max()));
    }
    return held;
  }
  if (e.size() == 7) {
    // {0, "", 0, token, "replicas", connected, needed}: no grant.
    if (e[0].integer != 0 || e[4].kind != type::string || e[4].str != "replicas" ||
        e[5].kind != type::integer || e[6].kind != type::integer || e[5].integer < 0 ||
        e[6].integer <= e[5].integer || !token_from(e[3], answer.token))
      return unexpected<result>(what, reply);
    answer.outcome = acquire_outcome::held;
    r.value.replicas_short = static_cast<int>(e[5].integer);
    r.value.replicas_needed = static_cast<int>(e[6].integer);
    return r;
  }
  if (e[0].integer != 0 || e.size() < 4 || e.size() > 6 || e[1].kind != type::string ||
      e[2].kind != type::integer || !token_from(e[3], answer.token))
    return unexpected<result>(what, reply);
  if (e.size() == 6 && e[4].kind == type::string && e[4].str == "reserved") {
    // {0, by node, window PTTL, token, "reserved", to node}: a hand-over's
    // reservation for another node; the holder is who handed over.
    if (e[5].kind != type::string || e[5].str.empty()) return unexpected<result>(what, reply);
    answer.outcome = acquire_outcome::held;
    answer.holder = e[1].str;
    answer.reserved_for = e[5].str;
    answer.remaining = milliseconds(e[2].integer >= 0 ? e[2].integer : -1);
    return r;
  }
  answer.outcome = acquire_outcome::held;
  answer.holder = holder_from_value(e[1].str);
  if (e.size() == 6) {
    // {0, holder, pttl, token, '', free_in_us}: held, with the time to the
    // microsecond. It can exceed PTTL by at most one millisecond.
    if (e[4].kind != type::string || !e[4].str.empty() || e[5].kind != type::integer ||
        e[2].integer < 0 || e[5].integer < e[2].integer * 1000 ||
        e[5].integer > e[2].integer * 1000 + 2000)
      return unexpected<result>(what, reply);
    answer.free_in = std::chrono::microseconds(e[5].integer);
  } else if (e.size() == 5) {
    if (e[4].kind != type::string ||
        (e[4].str != "fence" && e[4].str != "reset" && e[4].str != "failover" &&
         e[4].str != "vanished" && e[4].str != "abstained"))
      return unexpected<result>(what, reply);
    answer.outcome = acquire_outcome::held_back;
    r.value.found_reset = e[4].str == "reset" || e[4].str == "failover";
    r.value.record_missing = e[4].str == "reset";
    if (e[4].str == "reset") r.value.reset_why = "token counter missing";
    if (e[4].str == "failover") {
      r.value.reset_why =
          "the election's record was written by another server (a failover, a restart from its "
          "files, or in a Cluster a migration of the election's slot): the last writes may be "
          "lost";
    }
    if (e[4].str == "abstained") {
      answer.why = "registered only: this node may not take the lease yet (lease.failsafe peers)";
    }
    if (e[4].str == "vanished") {
      answer.why = "the lease key vanished before its expiry (a DEL or an eviction) while " +
                   holder_from_value(e[1].str) + " held it";
    }
    // The script names no holder when the fence stands alone.
    if (e[1].str == fenced_without_holder) answer.holder.clear();
  }
  // PTTL is -1 (no expiry) or -2 (gone): both mean "unknown" to the caller.
  answer.remaining = milliseconds(e[2].integer >= 0 ? e[2].integer : -1);
  return r;
}

parsed_reply<server_switch> parse_switch_reply(const redis_reply& reply) {
  constexpr std::string_view what = "server switch";
  using type = redis_reply::type;
  if (reply.kind == type::error) return server_error<server_switch>(what, reply);
  const auto& e = reply.elements;
  if (reply.kind != type::array || e.size() != 2 || e[0].kind != type::string ||
      e[1].kind != type::integer)
    return unexpected<server_switch>(what, reply);
  parsed_reply<server_switch> r;
  const auto& verdict = e[0].str;
  if (verdict == "same") {
    r.value.what = server_switch::seen::same;
  } else if (verdict == "promoted") {
    r.value.what = server_switch::seen::promoted;
  } else if (verdict == "failover" || verdict == "unrecorded" || verdict == "lost") {
    r.value.what = server_switch::seen::fenced;
  } else {
    return unexpected<server_switch>(what, reply);
  }
  r.value.verdict = verdict;
  r.value.fence_ms = e[1].integer;
  return r;
}

std::string info_field(std::string_view info, std::string_view name) {
  std::size_t at = 0;
  // The field must start a line: "xrun_id:" elsewhere is another field.
  for (;;) {
    at = info.find(name, at);
    if (at == std::string_view::npos) return {};
    if ((at == 0 || info[at - 1] == '\n') && info.substr(at + name.size(), 1) == ":") break;
    at += name.size();
  }
  auto value = info.substr(at + name.size() + 1);
  return std::string(value.substr(0, value.find_first_of("\r\n")));
}

std::string run_id_from_info(std::string_view info) {
  const auto value = info_field(info, "run_id");
  if (value.size() != 40) return {};
  for (char c : value) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
  }
  return value;
}

parsed_reply<renew_answer> parse_renew_reply(const redis_reply& reply) {
  return flag_as("renew", reply, renew_answer::renewed, renew_answer::lost);
}

parsed_reply<required_renewal> parse_required_renew_reply(const redis_reply& reply) {
  constexpr std::string_view what = "renew";
  using type = redis_reply::type;
  if (reply.kind == type::error) return server_error<required_renewal>(what, reply);
  const auto& e = reply.elements;
  if (reply.kind != type::array || e.size() != 3 || e[0].kind != type::integer ||
      e[1].kind != type::integer || e[2].kind != type::integer || e[0].integer < 0 ||
      e[0].integer > 2 || (e[0].integer != 0 && e[2].integer < 1) ||
      (e[0].integer == 2 && (e[1].integer < 0 || e[1].integer >= e[2].integer)))
    return unexpected<required_renewal>(what, reply);
  parsed_reply<required_renewal> r;
  r.value.needed = static_cast<int>(e[2].integer);
  r.value.answer = e[0].integer == 1 ? renew_answer::renewed : renew_answer::lost;
  if (e[0].integer == 2) r.value.short_of = static_cast<int>(e[1].integer);
  return r;
}

parsed_reply<std::vector<registered_candidate>> parse_candidates_reply(const redis_reply& reply,
                                                                      milliseconds ttl) {
  constexpr std::string_view what = "candidates";
  using type = redis_reply::type;
  using result = std::vector<registered_candidate>;
  constexpr std::size_t fields = 8;
  if (reply.kind == type::error) return server_error<result>(what, reply);
  const auto& e = reply.elements;
  if (reply.kind != type::array || e.size() % fields != 0) return unexpected<result>(what, reply);
  parsed_reply<result> r;
  for (std::size_t i = 0; i < e.size(); i += fields) {
    const auto& node = e[i];
    const auto& priority = e[i + 1];
    const auto& live = e[i + 2];
    const auto& left = e[i + 3];
    const auto& nonce = e[i + 4];
    const auto& cooling = e[i + 5];
    const auto& address = e[i + 6];
    const auto& card = e[i + 7];
    if (node.kind != type::string || node.str.empty() || priority.kind != type::integer ||
        priority.integer < std::numeric_limits<int>::min() ||
        priority.integer > std::numeric_limits<int>::max() || live.kind != type::integer ||
        live.integer < 0 || left.kind != type::integer || left.integer <= 0 ||
        nonce.kind != type::string || nonce.str.empty() || cooling.kind != type::integer ||
        cooling.integer < 0 || address.kind != type::string || card.kind != type::string)
      return unexpected<result>(what, reply);
    registered_candidate c;
    c.info.node = node.str;
    c.info.priority = static_cast<int>(priority.integer);
    c.info.live_for = milliseconds(live.integer);
    // A line whose end the server's clock moved is cut to two ttls ahead:
    // never a negative age.
    c.info.last_attempt_ago = std::max(2 * ttl - milliseconds(left.integer), milliseconds(0));
    c.info.cooling_down_for = milliseconds(cooling.integer);
    c.info.peer_address = address.str;
    c.info.card = card.str;
    c.left = milliseconds(left.integer);
    c.nonce = nonce.str;
    r.value.push_back(std::move(c));
  }
  return r;
}

parsed_reply<record_answer> parse_record_reply(const redis_reply& reply) {
  return flag_as("create record", reply, record_answer::created, record_answer::existed);
}

parsed_reply<release_answer> parse_release_reply(const redis_reply& reply) {
  return flag_as("release", reply, release_answer::released, release_answer::not_ours);
}

std::string holder_from_value(std::string_view value) {
  const auto colon = value.rfind(':');
  if (colon == std::string_view::npos) return std::string(value);
  return std::string(value.substr(0, colon));
}

parsed_reply<lease_holder> parse_look_reply(const redis_reply& reply) {
  constexpr std::string_view what = "look";
  using type = redis_reply::type;
  if (reply.kind == type::error) return server_error<lease_holder>(what, reply);
  const auto& e = reply.elements;
  if (reply.kind != type::array || e.size() != 2 || e[0].kind != type::string ||
      e[1].kind != type::string) {
    return unexpected<lease_holder>(what, reply);
  }
  std::uint64_t token = 0;
  const auto& text = e[1].str;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), token);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    return unexpected<lease_holder>(what, reply);
  }
  parsed_reply<lease_holder> r;
  if (!e[0].str.empty() && !reservation_in(e[0].str)) {
    r.value = {holder_from_value(e[0].str), token};
  }
  return r;
}

std::optional<lease_reservation> reservation_in(std::string_view value) {
  // As the acquire script matches it: '^%(reserved%) (%S+) (.*)$'.
  constexpr std::string_view prefix = "(reserved) ";
  if (!value.starts_with(prefix)) return std::nullopt;
  const auto rest = value.substr(prefix.size());
  const auto space = rest.find(' ');
  if (space == 0 || space == std::string_view::npos) return std::nullopt;
  return lease_reservation{std::string(rest.substr(0, space)), std::string(rest.substr(space + 1))};
}

std::optional<announced_term> parse_acquired_announcement(std::string_view message) {
  constexpr std::string_view prefix = "acquired ";
  if (!message.starts_with(prefix)) return std::nullopt;
  const std::string_view rest = message.substr(prefix.size());
  const auto space = rest.rfind(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  const std::string_view token_text = rest.substr(space + 1);
  std::uint64_t token = 0;
  auto [end, ec] = std::from_chars(token_text.data(), token_text.data() + token_text.size(), token);
  if (ec != std::errc() || end != token_text.data() + token_text.size()) return std::nullopt;
  return announced_term{holder_from_value(rest.substr(0, space)), token};
}

bool is_foreign_release(std::string_view message, std::string_view own_value) {
  constexpr std::string_view prefix = "released ";
  if (!message.starts_with(prefix)) return false;
  // The token never holds a space, the value might: split at the last one.
  const std::string_view rest = message.substr(prefix.size());
  const auto space = rest.rfind(' ');
  const std::string_view value = rest.substr(0, space);
  return !value.empty() && value != own_value;
}

std::variant<int, std::string> master_role(const redis_reply& r) {
  using type = redis_reply::type;
  if (r.kind != type::array || r.elements.empty() || r.elements[0].kind != type::string) {
    return std::string("an unexpected ROLE reply (" + describe_reply(r) + ")");
  }
  const auto& role = r.elements[0].str;
  if (role != "master") return role == "slave" ? std::string("replica") : role;
  if (r.elements.size() < 3 || r.elements[2].kind != type::array) return 0;
  return static_cast<int>(r.elements[2].elements.size());
}

}  // namespace baton
