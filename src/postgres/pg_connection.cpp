// The libpq session on asio. Every wait is asio's (async_wait on PQsocket);
// libpq only ever runs non-blocking steps: PQconnectPoll, PQsendQueryParams,
// PQflush, PQconsumeInput, PQisBusy, PQgetResult, PQnotifies. The socket is
// released (not closed: libpq owns it) before libpq may close it.
#include "pg_connection.hpp"

#include <libpq-fe.h>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include "baton/postgres_conninfo.hpp"
#include "postgres_error.hpp"

namespace baton::postgres_detail {
namespace {

namespace asio = boost::asio;

std::string one_line(std::string s) {
  for (auto& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::error_code aborted() { return boost::system::error_code(asio::error::operation_aborted); }

}  // namespace

std::shared_ptr<connection> connection::create(asio::io_context& io, connection_options options) {
  return std::shared_ptr<connection>(new connection(io, std::move(options)));
}

connection::connection(asio::io_context& io, connection_options options)
    : io_(io), options_(std::move(options)), socket_(io), timer_(io) {}

connection::~connection() {
  forget_socket();
  if (pg_ != nullptr) PQfinish(pg_);
}

void connection::async_query(std::string sql, std::vector<std::string> params, completion done) {
  if (state_ == state::closed) {
    asio::post(io_, [done = std::move(done)] { done({aborted(), {}, {}}); });
    return;
  }
  request r;
  r.sql = std::move(sql);
  r.params = std::move(params);
  r.done = std::move(done);
  waiting_.push_back(std::move(r));
  if (state_ == state::disconnected) {
    start_connect();
  } else if (state_ == state::connected) {
    send_next();
  }
}

void connection::prepare_ahead(std::string sql) {
  if (state_ != state::connected || !prepare_ || prepared_.contains(sql)) return;
  request r;
  r.sql = std::move(sql);
  r.prepare_only = true;
  waiting_.push_back(std::move(r));
  send_next();
}

void connection::connect() {
  if (state_ == state::disconnected) start_connect();
}

void connection::set_disconnect_handler(disconnect_handler handler) {
  on_disconnect_ = std::move(handler);
}

void connection::close() {
  if (state_ == state::closed) return;
  state_ = state::closed;
  options_.on_notify = nullptr;
  on_disconnect_ = nullptr;
  drop(aborted(), {});
}

void connection::start_connect() {
  state_ = state::connecting;
  ++generation_;
  prepared_.clear();
  prepare_ = options_.prepare_statements;
  where_ = summarize_conninfo(options_.conninfo).where;
  // Keywords apply in order: our application_name is a default the string
  // may override; the password (from a file or the environment) overrides
  // the string's.
  std::vector<const char*> keys{"application_name", "dbname", "client_encoding"};
  std::vector<const char*> values{options_.application_name.c_str(), options_.conninfo.c_str(),
                                  "UTF8"};
  if (!options_.password.empty()) {
    keys.push_back("password");
    values.push_back(options_.password.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  pg_ = PQconnectStartParams(keys.data(), values.data(), 1);
  if (pg_ == nullptr) {
    drop(postgres_errc::connect_failed, "connect " + where_ + ": libpq is out of memory");
    return;
  }
  if (PQstatus(pg_) == CONNECTION_BAD) {
    const std::string message = one_line(PQerrorMessage(pg_));
    drop(classify_connect_failure(message), "connect " + where_ + ": " + message);
    return;
  }
  arm_timer(options_.connect_timeout);
  // libpq: start as if PQconnectPoll had asked to wait for writability.
  connect_step(PGRES_POLLING_WRITING);
}

void connection::connect_step(int polling_status) {
  switch (static_cast<PostgresPollingStatusType>(polling_status)) {
    case PGRES_POLLING_OK:
      on_connected();
      return;
    case PGRES_POLLING_FAILED: {
      const std::string message = one_line(PQerrorMessage(pg_));
      drop(classify_connect_failure(message), "connect " + where_ + ": " + message);
      return;
    }
    case PGRES_POLLING_READING:
    case PGRES_POLLING_WRITING:
      break;
    default:
      // PGRES_POLLING_ACTIVE is obsolete; treat it as "call again".
      asio::post(io_, [self = shared_from_this(), gen = generation_] {
        if (gen == self->generation_ && self->pg_ != nullptr) {
          self->connect_step(PQconnectPoll(self->pg_));
        }
      });
      return;
  }
  // The socket may be a new one at every step (another address was tried).
  forget_socket();
  watch_socket();
  if (!socket_.is_open()) {
    drop(postgres_errc::connect_failed, "connect " + where_ + ": libpq has no socket");
    return;
  }
  const auto wait = polling_status == PGRES_POLLING_READING ? asio::posix::descriptor_base::wait_read
                                                            : asio::posix::descriptor_base::wait_write;
  socket_.async_wait(wait, [self = shared_from_this(), gen = generation_](boost::system::error_code ec) {
    if (ec || gen != self->generation_ || self->pg_ == nullptr) return;
    self->connect_step(PQconnectPoll(self->pg_));
  });
}

void connection::on_connected() {
  PQsetnonblocking(pg_, 1);
  // libpq prints the server's notices (WARNING: terminating connection ...)
  // on stderr by default; the store reports failures through its errors.
  PQsetNoticeProcessor(pg_, [](void*, const char*) {}, nullptr);
  backend_pid_ = PQbackendPID(pg_);
  forget_socket();
  watch_socket();
  wait_readable();
  if (!options_.setup_sql.empty()) {
    // Still connecting: the connect timeout covers the setup too.
    request setup;
    setup.sql = options_.setup_sql;
    setup.setup = true;
    waiting_.push_front(std::move(setup));
  } else {
    state_ = state::connected;
    timer_.cancel();
  }
  send_next();
}

void connection::send_next() {
  if (in_flight_ || waiting_.empty() || pg_ == nullptr) return;
  if (state_ != state::connected && !waiting_.front().setup) return;
  in_flight_ = std::move(waiting_.front());
  waiting_.pop_front();
  partial_ = {};
  int sent = 0;
  if (in_flight_->prepare_only) {
    // Prepared since it was queued, or this session no longer prepares.
    if (!prepare_ || prepared_.contains(in_flight_->sql)) {
      in_flight_.reset();
      send_next();
      return;
    }
    sent = send_prepare();
    arm_timer(options_.command_timeout);
  } else if (in_flight_->params.empty()) {
    // The simple protocol: several statements in one implicit transaction.
    sent = PQsendQuery(pg_, in_flight_->sql.c_str());
    if (!in_flight_->setup) arm_timer(options_.command_timeout);
  } else {
    sent = send_with_params();
    // One timeout for the whole statement, its prepare step included.
    arm_timer(options_.command_timeout);
  }
  if (sent == 0) {
    drop(postgres_errc::connection_lost,
         "send to " + where_ + ": " + one_line(PQerrorMessage(pg_)));
    return;
  }
  flush();
}

int connection::send_with_params() {
  auto& r = *in_flight_;
  std::vector<const char*> values;
  values.reserve(r.params.size());
  for (const auto& p : r.params) values.push_back(p.c_str());
  const int count = static_cast<int>(values.size());
  r.statement_name.clear();
  if (!prepare_) {
    return PQsendQueryParams(pg_, r.sql.c_str(), count, nullptr, values.data(), nullptr, nullptr, 0);
  }
  if (const auto known = prepared_.find(r.sql); known != prepared_.end()) {
    r.statement_name = known->second;
    return PQsendQueryPrepared(pg_, r.statement_name.c_str(), count, values.data(), nullptr,
                               nullptr, 0);
  }
  return send_prepare();
}

int connection::send_prepare() {
  auto& r = *in_flight_;
  r.preparing = true;
  r.statement_name = "baton_" + std::to_string(++statements_named_);
  // No parameter types: the server infers them, so their count is not sent.
  return PQsendPrepare(pg_, r.statement_name.c_str(), r.sql.c_str(), 0, nullptr);
}

bool connection::went_on() {
  auto& r = *in_flight_;
  if (r.preparing) {
    r.preparing = false;
    // A statement the server cannot prepare would fail the same way run
    // plainly: that failure is the answer.
    if (partial_.ec) return false;
    prepared_.emplace(r.sql, r.statement_name);
    if (r.prepare_only) return false;
  } else if (!r.statement_name.empty() && partial_sqlstate_ == "26000") {
    // invalid_sql_statement_name: this session's statements are not where
    // it prepared them (a pooler in transaction mode). Nothing ran; run it
    // plainly, and everything after it.
    prepare_ = false;
    prepared_.clear();
  } else {
    return false;
  }
  partial_ = {};
  partial_sqlstate_.clear();
  if (send_with_params() == 0) {
    drop(postgres_errc::connection_lost,
         "send to " + where_ + ": " + one_line(PQerrorMessage(pg_)));
    return true;
  }
  flush();
  return true;
}

void connection::flush() {
  if (pg_ == nullptr || writing_) return;
  const int left = PQflush(pg_);
  if (left < 0) {
    drop(postgres_errc::connection_lost,
         "send to " + where_ + ": " + one_line(PQerrorMessage(pg_)));
    return;
  }
  if (left == 0) return;
  writing_ = true;
  socket_.async_wait(asio::posix::descriptor_base::wait_write,
                     [self = shared_from_this(), gen = generation_](boost::system::error_code ec) {
                       if (gen != self->generation_) return;
                       self->writing_ = false;
                       if (!ec) self->flush();
                     });
}

void connection::wait_readable() {
  if (reading_ || !socket_.is_open()) return;
  reading_ = true;
  socket_.async_wait(asio::posix::descriptor_base::wait_read,
                     [self = shared_from_this(), gen = generation_](boost::system::error_code ec) {
                       if (gen != self->generation_) return;
                       self->reading_ = false;
                       if (!ec) self->on_readable();
                     });
}

void connection::on_readable() {
  if (PQconsumeInput(pg_) == 0) {
    drop(postgres_errc::connection_lost,
         "connection to " + where_ + " lost: " + one_line(PQerrorMessage(pg_)));
    return;
  }
  const auto gen = generation_;
  drain_notifications();
  collect_results();
  if (gen == generation_ && pg_ != nullptr) wait_readable();
}

void connection::collect_results() {
  while (in_flight_ && pg_ != nullptr && PQisBusy(pg_) == 0) {
    PGresult* result = PQgetResult(pg_);
    if (result == nullptr) {
      if (!in_flight_->setup && went_on()) continue;
      partial_sqlstate_.clear();
      request done = std::move(*in_flight_);
      in_flight_.reset();
      query_result outcome = std::move(partial_);
      partial_ = {};
      if (done.setup) {
        if (outcome.ec) {
          drop(outcome.ec, "session setup on " + where_ + ": " + outcome.detail);
          return;
        }
        state_ = state::connected;
      }
      timer_.cancel();
      if (!done.setup && !done.prepare_only) complete(done, std::move(outcome));
      send_next();
      continue;
    }
    switch (PQresultStatus(result)) {
      case PGRES_TUPLES_OK:
      case PGRES_SINGLE_TUPLE: {
        partial_.rows.clear();
        const int rows = PQntuples(result);
        const int fields = PQnfields(result);
        for (int r = 0; r < rows; ++r) {
          std::vector<std::optional<std::string>> row;
          row.reserve(static_cast<std::size_t>(fields));
          for (int f = 0; f < fields; ++f) {
            if (PQgetisnull(result, r, f) != 0) {
              row.emplace_back(std::nullopt);
            } else {
              row.emplace_back(std::string(PQgetvalue(result, r, f),
                                           static_cast<std::size_t>(PQgetlength(result, r, f))));
            }
          }
          partial_.rows.push_back(std::move(row));
        }
        break;
      }
      case PGRES_COMMAND_OK:
      case PGRES_EMPTY_QUERY:
        break;
      case PGRES_FATAL_ERROR:
      case PGRES_NONFATAL_ERROR:
        if (!partial_.ec) {
          const char* code = PQresultErrorField(result, PG_DIAG_SQLSTATE);
          const char* primary = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
          const std::string sqlstate = code != nullptr ? code : "";
          partial_sqlstate_ = sqlstate;
          partial_.ec = classify_sqlstate(sqlstate);
          partial_.detail = (primary != nullptr ? one_line(primary) : one_line(PQresultErrorMessage(result))) +
                            (sqlstate.empty() ? "" : " (SQLSTATE " + sqlstate + ")");
        }
        break;
      default:
        if (!partial_.ec) {
          partial_.ec = postgres_errc::unexpected_reply;
          partial_.detail = std::string("unexpected result status ") +
                            PQresStatus(PQresultStatus(result));
        }
        break;
    }
    PQclear(result);
  }
}

void connection::drain_notifications() {
  while (pg_ != nullptr) {
    PGnotify* n = PQnotifies(pg_);
    if (n == nullptr) return;
    std::string channel = n->relname != nullptr ? n->relname : "";
    std::string payload = n->extra != nullptr ? n->extra : "";
    const int pid = n->be_pid;
    PQfreemem(n);
    if (options_.on_notify) {
      asio::post(io_, [call = options_.on_notify, channel = std::move(channel),
                       payload = std::move(payload), pid]() mutable {
        call(std::move(channel), std::move(payload), pid);
      });
    }
  }
}

void connection::arm_timer(milliseconds after) {
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this(), gen = generation_](boost::system::error_code ec) {
    if (!ec && gen == self->generation_) self->on_timer(gen);
  });
}

void connection::on_timer(std::uint64_t) {
  if (state_ == state::connecting) {
    drop(postgres_errc::connect_failed,
         "connect " + where_ + ": no answer within " +
             std::to_string(options_.connect_timeout.count()) + " ms");
  } else if (in_flight_) {
    drop(postgres_errc::timeout, "no answer from " + where_ + " within " +
                                     std::to_string(options_.command_timeout.count()) + " ms");
  }
}

void connection::watch_socket() {
  if (pg_ == nullptr) return;
  const int fd = PQsocket(pg_);
  if (fd < 0) return;
  boost::system::error_code ec;
  socket_.assign(fd, ec);
}

void connection::forget_socket() {
  // release(): asio stops watching and cancels its waits but leaves the
  // descriptor open; it is libpq's to close.
  if (socket_.is_open()) socket_.release();
}

void connection::drop(std::error_code ec, const std::string& detail) {
  const bool was_connected = state_ == state::connected;
  ++generation_;
  timer_.cancel();
  forget_socket();
  if (pg_ != nullptr) {
    PQfinish(pg_);
    pg_ = nullptr;
  }
  backend_pid_ = 0;
  reading_ = false;
  writing_ = false;
  if (state_ != state::closed) state_ = state::disconnected;
  fail_all(ec, detail);
  if (was_connected && on_disconnect_) {
    asio::post(io_, [call = on_disconnect_, ec, detail] { call(ec, detail); });
  }
}

void connection::fail_all(std::error_code ec, const std::string& detail) {
  if (in_flight_) {
    request r = std::move(*in_flight_);
    in_flight_.reset();
    if (!r.setup && !r.prepare_only) complete(r, {ec, detail, {}});
  }
  while (!waiting_.empty()) {
    request r = std::move(waiting_.front());
    waiting_.pop_front();
    if (!r.setup && !r.prepare_only) complete(r, {ec, detail, {}});
  }
}

void connection::complete(request& r, query_result result) {
  asio::post(io_, [done = std::move(r.done), result = std::move(result)]() mutable {
    done(std::move(result));
  });
}

}  // namespace baton::postgres_detail
