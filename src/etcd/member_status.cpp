#include "member_status.hpp"

#include <charconv>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "etcd_wire.hpp"
#include "store/check_lines.hpp"

namespace baton::etcd_detail {
namespace {

// A uint64 member id: a decimal string, or a number.
std::string id_field(const nlohmann::json& answer, const char* name) {
  const auto it = answer.find(name);
  if (it == answer.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned() || it->is_number_integer())
    return std::to_string(it->get<std::uint64_t>());
  throw std::runtime_error(std::string(name) + " is not a member id");
}

std::int64_t int64_of(const nlohmann::json& object, const char* name) {
  const auto v = int64_field(object, name);
  if (!v) throw std::runtime_error(std::string(name) + " is not a whole number");
  return *v;
}

}  // namespace

std::string member_id_text(std::string_view decimal) {
  std::uint64_t id = 0;
  const auto* end = decimal.data() + decimal.size();
  const auto [stop, error] = std::from_chars(decimal.data(), end, id);
  if (decimal.empty() || id == 0 || error != std::errc{} || stop != end) return std::string(decimal);
  char hex[17];
  const auto written = std::to_chars(hex, hex + sizeof hex, id, 16);
  return std::string(hex, written.ptr);
}

member_status read_member_status(const nlohmann::json& answer) {
  if (!answer.is_object()) throw std::runtime_error("the status answer is not an object");
  member_status s;
  if (const auto v = answer.find("version"); v != answer.end() && v->is_string()) s.version = *v;
  if (const auto h = answer.find("header"); h != answer.end() && h->is_object()) {
    s.member_id = id_field(*h, "member_id");
  }
  s.leader = id_field(answer, "leader");
  s.raft_term = int64_of(answer, "raftTerm");
  s.raft_index = int64_of(answer, "raftIndex");
  return s;
}

check_line endpoint_line(std::string_view url, const store_error& error,
                         const nlohmann::json& answer, std::chrono::nanoseconds took,
                         milliseconds ttl) {
  check_line line{check_verdict::ok, "endpoint", std::string(url) + ": "};
  if (error) {
    line.verdict = check_verdict::hazard;
    line.text += error.message() + " (the store moves on to the next endpoint)";
    return line;
  }
  member_status s;
  try {
    s = read_member_status(answer);
  } catch (const std::exception& bad) {
    line.verdict = check_verdict::hazard;
    line.text += std::string("its status answer: ") + bad.what();
    return line;
  }
  line.text += "etcd " + (s.version.empty() ? std::string("of unknown version") : s.version) + ", ";
  if (s.leader.empty() || s.leader == "0") {
    line.verdict = check_verdict::hazard;
    line.text += "knows no leader (it cannot serve)";
  } else if (!s.member_id.empty() && s.member_id == s.leader) {
    line.text += "the leader";
  } else {
    line.text += "a follower";
  }
  line.text += ", raft term " + std::to_string(s.raft_term) + " index " +
               std::to_string(s.raft_index) + ", " + store_check_detail::ms_text(took);
  if (std::chrono::duration_cast<milliseconds>(took) * 10 > ttl) {
    line.verdict = check_verdict::hazard;
    line.text += ": more than a tenth of lease.ttl";
  }
  return line;
}

}  // namespace baton::etcd_detail
