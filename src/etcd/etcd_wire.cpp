#include "etcd_wire.hpp"

#include <charconv>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base64.hpp"

namespace baton::etcd_detail {
namespace {

using json = nlohmann::json;

std::string b64(std::string_view s) {
  return base64_encode(s);
}

std::int64_t need_int64(const json& object, const char* name) {
  const auto v = int64_field(object, name);
  if (!v) throw std::runtime_error(std::string("field ") + name + " is not an integer");
  return *v;
}

std::string need_bytes(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end()) return {};
  if (!it->is_string()) throw std::runtime_error(std::string("field ") + name + " is not text");
  auto decoded = base64_decode(it->get_ref<const std::string&>());
  if (!decoded) throw std::runtime_error(std::string("field ") + name + " is not base64");
  return *decoded;
}

const json& result_of(const json& answer) {
  if (!answer.is_object()) throw std::runtime_error("the answer is not a JSON object");
  if (const auto e = answer.find("error"); e != answer.end()) {
    if (e->is_object() && e->contains("message") && (*e)["message"].is_string()) {
      throw std::runtime_error((*e)["message"].get<std::string>());
    }
    throw std::runtime_error(e->is_string() ? e->get<std::string>() : e->dump());
  }
  if (const auto r = answer.find("result"); r != answer.end()) {
    if (!r->is_object()) throw std::runtime_error("result is not an object");
    return *r;
  }
  return answer;
}

}  // namespace

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = end.back();
    if (static_cast<unsigned char>(last) < 0xff) {
      last = static_cast<char>(static_cast<unsigned char>(last) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

std::string range_request(std::string_view key, std::string_view range_end) {
  json j{{"key", b64(key)}};
  if (!range_end.empty()) j["range_end"] = b64(range_end);
  return j.dump();
}

std::string grant_request(std::int64_t ttl_seconds) {
  return json{{"TTL", std::to_string(ttl_seconds)}}.dump();
}

std::string lease_id_request(std::int64_t lease) {
  return json{{"ID", std::to_string(lease)}}.dump();
}

std::string time_to_live_request(std::int64_t lease) {
  return lease_id_request(lease);
}

namespace {

json txn_ops(const std::vector<txn_op>& list) {
  json ops = json::array();
  for (const auto& op : list) {
    switch (op.what) {
      case txn_op::kind::put: {
        json put{{"key", b64(op.key)}, {"value", b64(op.value)}};
        if (op.lease != 0) put["lease"] = std::to_string(op.lease);
        ops.push_back({{"request_put", std::move(put)}});
        break;
      }
      case txn_op::kind::remove: {
        json del{{"key", b64(op.key)}};
        if (!op.range_end.empty()) del["range_end"] = b64(op.range_end);
        ops.push_back({{"request_delete_range", std::move(del)}});
        break;
      }
      case txn_op::kind::range: {
        json range{{"key", b64(op.key)}};
        if (!op.range_end.empty()) range["range_end"] = b64(op.range_end);
        if (op.min_mod_revision > 0)
          range["min_mod_revision"] = std::to_string(op.min_mod_revision);
        ops.push_back({{"request_range", std::move(range)}});
        break;
      }
    }
  }
  return ops;
}

json txn_compares(const std::vector<compare>& all_of) {
  json compares = json::array();
  for (const auto& c : all_of) {
    json one{{"key", b64(c.key)}, {"target", c.target}, {"result", c.result}};
    if (c.target == "CREATE") one["create_revision"] = std::to_string(c.revision);
    if (c.target == "MOD") one["mod_revision"] = std::to_string(c.revision);
    if (c.target == "VALUE") one["value"] = b64(c.value);
    compares.push_back(std::move(one));
  }
  return compares;
}

}  // namespace

std::string txn_request(const std::vector<compare>& all_of, const std::vector<txn_op>& then) {
  return json{{"compare", txn_compares(all_of)}, {"success", txn_ops(then)}}.dump();
}

std::string txn_request(const std::vector<compare>& all_of, const std::vector<txn_op>& then,
                        const std::vector<txn_op>& otherwise) {
  return json{{"compare", txn_compares(all_of)},
              {"success", txn_ops(then)},
              {"failure", txn_ops(otherwise)}}
      .dump();
}

std::string watch_request(std::string_view key, std::string_view range_end,
                          std::int64_t start_revision) {
  return json{{"create_request",
               {{"key", b64(key)},
                {"range_end", b64(range_end)},
                {"start_revision", std::to_string(start_revision)},
                {"prev_kv", true}}}}
      .dump();
}

std::optional<std::int64_t> int64_field(const json& object, const char* name) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return 0;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (!it->is_string()) return std::nullopt;
  const auto& s = it->get_ref<const std::string&>();
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

header read_header(const json& answer) {
  const auto& r = result_of(answer);
  const auto it = r.find("header");
  if (it == r.end() || !it->is_object()) throw std::runtime_error("the answer has no header");
  header h;
  h.revision = need_int64(*it, "revision");
  h.raft_term = int64_field(*it, "raft_term").value_or(0);
  if (const auto c = it->find("cluster_id"); c != it->end()) {
    h.cluster_id = c->is_string() ? c->get<std::string>() : c->dump();
  }
  return h;
}

key_value read_kv(const json& kv) {
  if (!kv.is_object()) throw std::runtime_error("a key-value is not an object");
  key_value out;
  out.key = need_bytes(kv, "key");
  out.value = need_bytes(kv, "value");
  out.create_revision = need_int64(kv, "create_revision");
  out.mod_revision = need_int64(kv, "mod_revision");
  out.version = need_int64(kv, "version");
  out.lease = need_int64(kv, "lease");
  return out;
}

std::vector<key_value> read_range(const json& answer) {
  const auto& r = result_of(answer);
  std::vector<key_value> out;
  if (const auto it = r.find("kvs"); it != r.end()) {
    if (!it->is_array()) throw std::runtime_error("kvs is not an array");
    for (const auto& kv : *it) out.push_back(read_kv(kv));
  }
  return out;
}

grant_answer read_grant(const json& answer) {
  const auto& r = result_of(answer);
  grant_answer g;
  g.hdr = read_header(answer);
  g.id = need_int64(r, "ID");
  g.ttl_seconds = need_int64(r, "TTL");
  if (g.id == 0) throw std::runtime_error("the lease grant named no lease");
  return g;
}

keepalive_answer read_keepalive(const json& answer) {
  const auto& r = result_of(answer);
  return {read_header(answer), need_int64(r, "TTL")};
}

ttl_answer read_time_to_live(const json& answer) {
  const auto& r = result_of(answer);
  return {read_header(answer), need_int64(r, "TTL"), int64_field(r, "grantedTTL").value_or(0)};
}

txn_answer read_txn(const json& answer) {
  const auto& r = result_of(answer);
  txn_answer t;
  t.hdr = read_header(answer);
  if (const auto it = r.find("succeeded"); it != r.end()) {
    if (!it->is_boolean()) throw std::runtime_error("succeeded is not a boolean");
    t.succeeded = it->get<bool>();
  }
  return t;
}

std::vector<key_value> read_txn_range(const json& answer, std::size_t at) {
  const auto& r = result_of(answer);
  const auto it = r.find("responses");
  if (it == r.end() || !it->is_array() || it->size() <= at) {
    throw std::runtime_error("the txn answered fewer operations than it was sent");
  }
  const auto& op = (*it)[at];
  const auto range = op.is_object() ? op.find("response_range") : op.end();
  if (!op.is_object() || range == op.end() || !range->is_object()) {
    throw std::runtime_error("the txn's operation " + std::to_string(at) + " is not a range");
  }
  std::vector<key_value> out;
  if (const auto kvs = range->find("kvs"); kvs != range->end()) {
    if (!kvs->is_array()) throw std::runtime_error("kvs is not an array");
    for (const auto& kv : *kvs) out.push_back(read_kv(kv));
  }
  return out;
}

watch_message read_watch_message(std::string_view line) {
  const json answer = json::parse(line, nullptr, false);
  if (answer.is_discarded()) throw std::runtime_error("a watch message is not JSON");
  const auto& r = result_of(answer);
  watch_message m;
  m.hdr = read_header(answer);
  m.created = r.value("created", false);
  m.canceled = r.value("canceled", false);
  m.compact_revision = need_int64(r, "compact_revision");
  if (const auto it = r.find("cancel_reason"); it != r.end() && it->is_string()) {
    m.cancel_reason = it->get<std::string>();
  }
  if (const auto it = r.find("events"); it != r.end()) {
    if (!it->is_array()) throw std::runtime_error("events is not an array");
    for (const auto& e : *it) {
      watch_event ev;
      if (const auto t = e.find("type"); t != e.end()) {
        if (!t->is_string()) throw std::runtime_error("an event's type is not text");
        const auto& type = t->get_ref<const std::string&>();
        if (type == "DELETE") {
          ev.deleted = true;
        } else if (type != "PUT") {
          throw std::runtime_error("unknown event type " + type);
        }
      }
      ev.kv = read_kv(e.value("kv", json::object()));
      if (const auto p = e.find("prev_kv"); p != e.end()) ev.prev = read_kv(*p);
      m.events.push_back(std::move(ev));
    }
  }
  return m;
}

}  // namespace baton::etcd_detail
