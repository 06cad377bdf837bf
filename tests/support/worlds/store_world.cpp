// The list of worlds and the two ways their options are written down.
#include "support/worlds/store_world.hpp"

#include <time.h>

#include <cctype>
#include <functional>
#include <stdexcept>

#include "support/worlds/world_kinds.hpp"

namespace baton::testing {
namespace {

struct world_maker {
  std::string kind;
  std::function<std::unique_ptr<store_world>()> make;
};

const std::vector<world_maker>& world_makers() {
  static const std::vector<world_maker> makers = {
      {"redis", worlds::make_redis_world},         {"sentinel", worlds::make_sentinel_world},
      {"cluster", worlds::make_cluster_world},     {"redlock", worlds::make_redlock_world},
      {"postgres", worlds::make_postgres_world},   {"etcd", worlds::make_etcd_world},
      {"zookeeper", worlds::make_zookeeper_world},
  };
  return makers;
}

// A YAML double-quoted scalar: the text with its backslashes and quotes
// escaped (option values hold neither newlines nor control characters).
std::string yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

const std::vector<std::string>& store_world_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> out;
    for (const auto& m : world_makers()) out.push_back(m.kind);
    return out;
  }();
  return kinds;
}

std::unique_ptr<store_world> make_store_world(const std::string& kind) {
  for (const auto& m : world_makers()) {
    if (m.kind == kind) return m.make();
  }
  throw std::invalid_argument("no store world of kind '" + kind + "'");
}

std::string yaml_of(const store_options& options) {
  std::vector<std::string> sections;
  for (const auto& o : options) {
    const std::string section = o.key.substr(0, o.key.find('.'));
    bool known = false;
    for (const auto& s : sections) known = known || s == section;
    if (!known) sections.push_back(section);
  }
  std::string out;
  for (const auto& section : sections) {
    out += section + ":\n";
    for (const auto& o : options) {
      const auto dot = o.key.find('.');
      if (o.key.substr(0, dot) == section) {
        std::string value;
        for (const auto& v : o.values) value += (value.empty() ? "" : ", ") + yaml_quoted(v);
        out += "  " + o.key.substr(dot + 1) + ": " + (o.list ? "[" + value + "]" : value) + "\n";
      }
    }
  }
  return out;
}

env_list environment_of(const store_options& options) {
  env_list out;
  for (const auto& o : options) {
    std::string name = "BATON_";
    for (const char c : o.key) {
      name += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    std::string value;
    for (const auto& v : o.values) value += (value.empty() ? "" : ",") + v;
    out.emplace_back(name, value);
  }
  return out;
}

namespace worlds {

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace worlds
}  // namespace baton::testing
