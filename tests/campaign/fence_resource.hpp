// The resource a campaign's apps write to through a shipped fence (fence/):
// a PostgreSQL table or a Redis list, on a server of its own that no fault
// reaches; its history is what the fence accepted, in order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "campaign/history_check.hpp"
#include "support/servers/postgres_server.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::campaign {

class fence_resource {
 public:
  /// `which` is "postgres" or "redis"; throws std::invalid_argument otherwise.
  fence_resource(const std::string& which, const std::string& resource);

  /// The app's arguments that name the resource and its server.
  std::vector<std::string> app_args() const;

  /// The writes the fence accepted, in the order they landed.
  std::vector<accepted_write> history() const;

 private:
  std::string resource_;
  std::unique_ptr<testing::postgres_server> pg_;
  std::unique_ptr<testing::redis_server> redis_;
};

}  // namespace baton::campaign
