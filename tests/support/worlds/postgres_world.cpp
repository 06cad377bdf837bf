// The postgres kind's world: one PostgreSQL server. The lease is the
// election's row of the lease table (baton_lease, docs/stores/postgres.md),
// which an operator's DELETE removes.
#include <memory>
#include <stdexcept>
#include <string>

#include "support/servers/postgres_server.hpp"
#include "support/worlds/world_kinds.hpp"

namespace baton::testing::worlds {
namespace {

// `text` as an SQL string literal.
std::string sql_literal(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

class postgres_world final : public store_world {
 public:
  std::string kind() const override { return "postgres"; }
  store_options options() const override {
    return {text_option("store.kind", "postgres"), text_option("postgres.url", server_.conninfo())};
  }
  void delete_lease(const std::string& election) override {
    const auto deleted =
        server_.query("DELETE FROM baton_lease WHERE election = " + sql_literal(election) +
                      " RETURNING election");
    if (deleted.empty()) throw std::runtime_error("postgres: no lease row for " + election);
  }
  bool tells_lease_end() const override { return true; }
  /// The row's expires_at, as the time left on the server's clock (whole ms,
  /// rounded down, read after the clock).
  std::optional<std::int64_t> lease_kept_until_ns(const std::string& election) override {
    // From when the statement was sent: a new connection first, which on a
    // busy host can take a good part of a ttl.
    std::int64_t before = 0;
    const auto rows = server_.query(
        "SELECT floor(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint "
        "FROM baton_lease WHERE election = " +
        sql_literal(election) + " AND expires_at > clock_timestamp()", &before);
    if (rows.empty() || rows.front().empty()) return std::nullopt;
    return before + std::stoll(rows.front().front()) * 1'000'000;
  }
  std::string diagnostics() const override { return "postgres log:\n" + server_.log_tail(); }

 private:
  postgres_server server_;
};

}  // namespace

std::unique_ptr<store_world> make_postgres_world() {
  return std::make_unique<postgres_world>();
}

}  // namespace baton::testing::worlds
