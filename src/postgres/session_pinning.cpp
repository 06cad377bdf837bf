#include "session_pinning.hpp"

#include "postgres_error.hpp"

namespace baton::postgres_detail {
namespace {

constexpr const char* server_pid_sql = "SELECT pg_backend_pid()";

struct pinning_check : std::enable_shared_from_this<pinning_check> {
  boost::asio::io_context& io;
  std::shared_ptr<connection> session;
  connection_options helper_options;
  std::function<void(std::optional<store_error>)> done;
  std::shared_ptr<connection> helper;
  std::string first_pid;

  pinning_check(boost::asio::io_context& io_, std::shared_ptr<connection> s, connection_options o,
                std::function<void(std::optional<store_error>)> d)
      : io(io_), session(std::move(s)), helper_options(std::move(o)), done(std::move(d)) {}

  void finish(std::optional<store_error> outcome) {
    if (helper) helper->close();
    helper.reset();
    if (auto d = std::move(done)) d(std::move(outcome));
  }

  static std::optional<std::string> single_value(const query_result& r) {
    if (r.rows.size() != 1 || r.rows[0].size() != 1 || !r.rows[0][0]) return std::nullopt;
    return r.rows[0][0];
  }

  void start() {
    session->async_query(server_pid_sql, {}, [self = shared_from_this()](query_result r) {
      if (r.ec) return self->finish(store_error{r.ec, "listening session: " + r.detail});
      const auto pid = single_value(r);
      if (!pid) return self->finish(store_error{postgres_errc::unexpected_reply, "listening session: pg_backend_pid() gave no single value"});
      // Straight to the server: libpq was told this very process at connect.
      if (*pid == std::to_string(self->session->backend_pid())) return self->finish(std::nullopt);
      self->first_pid = *pid;
      self->occupy_freed_server_session();
    });
  }

  void occupy_freed_server_session() {
    helper_options.setup_sql.clear();
    helper_options.on_notify = nullptr;
    helper_options.application_name += " (pooler check)";
    helper = connection::create(io, helper_options);
    // The simple protocol: BEGIN leaves the transaction open, so a pooler in
    // transaction mode keeps the server session it picked for this client.
    helper->async_query(std::string("BEGIN; ") + server_pid_sql, {},
                        [self = shared_from_this()](query_result r) {
                          if (r.ec) {
                            return self->finish(
                                store_error{r.ec, "listening session's pooler check: " + r.detail});
                          }
                          self->ask_again();
                        });
  }

  void ask_again() {
    session->async_query(server_pid_sql, {}, [self = shared_from_this()](query_result r) {
      if (r.ec) return self->finish(store_error{r.ec, "listening session: " + r.detail});
      const auto pid = single_value(r);
      if (pid && *pid == self->first_pid) return self->finish(std::nullopt);
      self->finish(store_error{
          postgres_errc::pooler,
          "the listening session moved from server process " + self->first_pid + " to " +
              pid.value_or("?") +
              " between two statements: a pooler in transaction mode (such as PgBouncer with "
              "pool_mode=transaction) is between baton and PostgreSQL, and LISTEN does not work "
              "through it; connect directly or through session pooling"});
    });
  }
};

}  // namespace

std::function<void()> check_session_pinned(
    boost::asio::io_context& io, std::shared_ptr<connection> session,
    connection_options helper_options, std::function<void(std::optional<store_error>)> done) {
  auto check = std::make_shared<pinning_check>(io, std::move(session), std::move(helper_options),
                                               std::move(done));
  check->start();
  return [weak = std::weak_ptr<pinning_check>(check)] {
    if (auto c = weak.lock()) {
      c->finish(store_error{make_error_code(std::errc::operation_canceled), "abandoned"});
    }
  };
}

}  // namespace baton::postgres_detail
