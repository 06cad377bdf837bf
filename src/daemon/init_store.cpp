// See baton/init_store.hpp. The store is made exactly as `run` makes it, so
// the same URL, password and TLS settings reach the same keys.
#include "baton/init_store.hpp"

#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <string>

#include "baton/store_factory.hpp"

namespace baton {

namespace {

// One try: what the store answered, or why it did not, and where it was.
struct create_try {
  std::optional<record_answer> answer;
  std::optional<store_error> failure;
  std::string where;
};

create_try try_create_record(const config& cfg) {
  boost::asio::io_context io;
  const auto store = make_lease_store(io, cfg);
  create_try out;
  store->async_create_record([&](store_error e, record_answer a) {
    if (e) {
      out.failure = std::move(e);
    } else {
      out.answer = a;
    }
  });
  // Connect, log in and one round trip: bounded by the store's own timeouts,
  // with a margin; the store then fails the call by itself.
  const auto deadline = mono_clock::now() + store_call_bound(cfg) + milliseconds(2000);
  while (!out.failure && !out.answer && mono_clock::now() < deadline) {
    io.run_one_until(deadline);
  }
  out.where = store->status().endpoint;
  store->close();
  return out;
}

}  // namespace

int init_store(const config& cfg, std::ostream& out, std::ostream& err) {
  // The store's timeouts are sized for renewals (a fraction of the ttl); a
  // one-shot admin command on a busy server may need longer, and creating
  // the record is idempotent, so a try that timed out is repeated.
  constexpr int tries = 3;
  create_try result;
  for (int attempt = 1; attempt <= tries; ++attempt) {
    try {
      result = try_create_record(cfg);
    } catch (const std::exception& e) {
      err << "baton: init-store: " << e.what() << '\n';
      return 1;
    }
    // Only a slow answer is worth another try; a refused connection or a
    // refusal would say the same again.
    if (!result.failure || result.failure->code != store_errc::timeout) break;
    if (attempt < tries) {
      err << "baton: init-store: "
          << (result.failure ? result.failure->message() : "no answer from " + result.where)
          << "; trying again (" << attempt + 1 << " of " << tries << ")\n";
    }
  }
  if (result.answer == record_answer::created) {
    out << "init-store: created the record of election " << cfg.election << " on " << result.where
        << ": its first start will not be held back\n";
    return 0;
  }
  if (result.answer == record_answer::existed) {
    out << "init-store: election " << cfg.election << " already has a record on " << result.where
        << ": nothing changed\n";
    return 0;
  }
  err << "baton: init-store: "
      << (result.failure ? result.failure->message() : "no answer from " + result.where) << '\n';
  return result.failure ? init_store_exit_code(result.failure->code) : 1;
}

int init_store_exit_code(std::error_code failure) {
  // The store answered and said no: credentials, a missing permission, a
  // table it may not create. Retrying will not help; granting will.
  if (failure == store_errc::auth || failure == store_errc::refused) return 3;
  return 1;
}

int print_store_schema(const config& cfg, std::ostream& out) {
  const auto text = store_schema_text(cfg);
  if (text.empty()) {
    out << "-- the " << cfg.store.kind << " store needs no schema: nothing to apply\n";
  } else {
    out << text;
  }
  return 0;
}

}  // namespace baton
