// Parsing of the Redlock masters' replies (master_replies.hpp).
#include "master_replies.hpp"

#include <charconv>

#include "redis/redis_error.hpp"

namespace baton::redlock_detail {
namespace {

using type = redis_reply::type;

template <typename T>
parsed_reply<T> unexpected(std::string_view what, const redis_reply& reply) {
  parsed_reply<T> r;
  r.ec = redis_errc::unexpected_reply;
  r.detail = std::string(what) + ": unexpected reply " + describe_reply(reply);
  return r;
}

template <typename T>
parsed_reply<T> server_error(std::string_view what, const redis_reply& reply) {
  parsed_reply<T> r;
  r.ec = classify_error_reply(reply.str);
  r.detail = std::string(what) + ": " + reply.str;
  return r;
}

// A counter as the scripts return it: a decimal string (GET) or an integer.
bool counter_from(const redis_reply& r, std::uint64_t& out) {
  if (r.kind == type::integer) {
    if (r.integer < 0) return false;
    out = static_cast<std::uint64_t>(r.integer);
    return true;
  }
  if (r.kind != type::string || r.str.empty()) return false;
  const auto* end = r.str.data() + r.str.size();
  const auto [at, ec] = std::from_chars(r.str.data(), end, out);
  return ec == std::errc{} && at == end;
}

}  // namespace

parsed_reply<grant_reply> parse_grant_reply(const redis_reply& reply) {
  constexpr std::string_view what = "acquire";
  if (reply.kind == type::error) return server_error<grant_reply>(what, reply);
  parsed_reply<grant_reply> r;
  auto& a = r.value.answer;
  if (reply.kind == type::array && reply.elements.size() == 3 &&
      reply.elements[0].kind == type::integer && reply.elements[0].integer == 1) {
    const auto& e = reply.elements;
    if (!counter_from(e[1], a.counter) || e[2].kind != type::integer ||
        (e[2].integer != 0 && e[2].integer != 1))
      return unexpected<grant_reply>(what, reply);
    a.what = master_answer::kind::granted;
    a.was_free = e[2].integer == 1;
    return r;
  }
  auto busy = parse_acquire_reply(reply);
  if (busy.ec) {
    r.ec = busy.ec;
    r.detail = std::move(busy.detail);
    return r;
  }
  const auto& answer = busy.value.answer;
  // A grant always comes as {1, counter, was_free}; {1, token} would mean a
  // server running the single-server script, which this store never sends.
  if (answer.acquired()) return unexpected<grant_reply>(what, reply);
  a.what = answer.outcome == acquire_outcome::held ? master_answer::kind::held
                                                   : master_answer::kind::held_back;
  a.counter = answer.token;
  a.holder = answer.holder;
  a.reserved_for = answer.reserved_for;
  a.outranked_by = answer.outranked_by;
  if (answer.failsafe_hold) {
    // The third element: the record's list number, or -1 for a promise's
    // hold (BATON_LUA_FAILSAFE_HOLD); the single-server parse ignores it.
    const auto& list = reply.elements[2];
    if (list.kind != type::integer || list.integer < -1) return unexpected<grant_reply>(what, reply);
    a.hold_list = list.integer;
    a.failsafe_hold = answer.failsafe_hold;
    a.why = answer.why;
  } else if (a.what == master_answer::kind::held_back && reply.elements.size() >= 5 &&
             reply.elements[4].kind == type::string && reply.elements[4].str == "abstained") {
    a.why = answer.why;
  }
  if (answer.free_in.count() >= 0) {
    a.free_in = answer.free_in;
  } else if (answer.remaining.count() >= 0) {
    a.free_in = answer.remaining;
  }
  r.value.found_reset = busy.value.found_reset;
  return r;
}

parsed_reply<renewal> parse_renewal_reply(const redis_reply& reply) {
  constexpr std::string_view what = "renew";
  if (reply.kind == type::error) return server_error<renewal>(what, reply);
  if (reply.kind != type::integer || reply.integer < 0 || reply.integer > 2)
    return unexpected<renewal>(what, reply);
  parsed_reply<renewal> r;
  r.value = reply.integer == 1 ? renewal::renewed
            : reply.integer == 2 ? renewal::taken
                                 : renewal::not_ours;
  return r;
}

parsed_reply<bool> parse_write_back_reply(const redis_reply& reply) {
  constexpr std::string_view what = "token write-back";
  if (reply.kind == type::error) return server_error<bool>(what, reply);
  if (reply.kind != type::array || reply.elements.size() != 2 ||
      reply.elements[0].kind != type::integer || reply.elements[1].kind != type::string ||
      (reply.elements[0].integer != 0 && reply.elements[0].integer != 1))
    return unexpected<bool>(what, reply);
  parsed_reply<bool> r;
  r.value = reply.elements[0].integer == 1;
  if (!r.value) r.detail = reply.elements[1].str;
  return r;
}

}  // namespace baton::redlock_detail
