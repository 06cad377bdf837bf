#include "campaign/fence_resource.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "support/built_paths.hpp"

namespace baton::campaign {
namespace {

// A file of the source tree's fence/ folder (the shipped fences).
std::string fence_file(const std::string& relative) {
  const auto path = std::filesystem::path(testing::source_root_path()) / "fence" / relative;
  std::ifstream in(path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (text.empty()) throw std::runtime_error("cannot read " + path.string());
  return text;
}

}  // namespace

fence_resource::fence_resource(const std::string& which, const std::string& resource)
    : resource_(resource) {
  if (which == "postgres") {
    pg_ = std::make_unique<testing::postgres_server>();
    pg_->query("SET client_min_messages TO warning;\n" + fence_file("postgresql/baton_fence.sql"));
    pg_->query(
        "CREATE TABLE fence_history (id bigserial PRIMARY KEY, resource text NOT NULL, "
        "token bigint NOT NULL, seq bigint NOT NULL, writer text NOT NULL)");
  } else if (which == "redis") {
    redis_ = std::make_unique<testing::redis_server>();
  } else {
    throw std::invalid_argument("unknown fence '" + which + "' (redis or postgres)");
  }
}

std::vector<std::string> fence_resource::app_args() const {
  if (pg_) return {"--resource", resource_, "--postgres", pg_->conninfo()};
  return {"--resource",
          resource_,
          "--redis",
          "127.0.0.1:" + std::to_string(redis_->port()),
          "--script",
          (std::filesystem::path(testing::source_root_path()) / "fence/redis/baton_fence.lua")
              .string()};
}

std::vector<accepted_write> fence_resource::history() const {
  std::vector<accepted_write> out;
  if (pg_) {
    for (const auto& row : pg_->query("SELECT token, writer || ':' || seq FROM fence_history "
                                      "WHERE resource = '" +
                                      resource_ + "' ORDER BY id")) {
      out.push_back({std::stoull(row.at(0)), row.at(1)});
    }
    return out;
  }
  for (const auto& entry :
       redis_->command({"LRANGE", "app:{" + resource_ + "}:history", "0", "-1"})) {
    const auto space = entry.find(' ');
    out.push_back({std::stoull(entry.substr(0, space)), entry.substr(space + 1)});
  }
  return out;
}

}  // namespace baton::campaign
