// See baton/init_store.hpp. The store is made exactly as `run` makes it, so
// the same URL, password and TLS settings reach the same keys.
#include "baton/init_store.hpp"

#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>

#include "baton/store_factory.hpp"

namespace baton {

int init_store(const config& cfg, std::ostream& out, std::ostream& err) {
  boost::asio::io_context io;
  std::unique_ptr<lease_store> store;
  try {
    store = make_lease_store(io, cfg);
  } catch (const std::exception& e) {
    err << "baton: init-store: " << e.what() << '\n';
    return 1;
  }
  std::optional<store_error> failure;
  std::optional<record_answer> answer;
  store->async_create_record([&](store_error e, record_answer a) {
    if (e) {
      failure = std::move(e);
    } else {
      answer = a;
    }
  });
  // Connect, log in and one round trip: bounded by the store's own timeouts,
  // with a margin; the store then fails the call by itself.
  const auto deadline = mono_clock::now() + store_call_bound(cfg) + milliseconds(2000);
  while (!failure && !answer && mono_clock::now() < deadline) {
    io.run_one_until(deadline);
  }
  const auto where = store->status().endpoint;
  store->close();
  if (answer == record_answer::created) {
    out << "init-store: created the record of election " << cfg.election << " on " << where
        << ": its first start will not be held back\n";
    return 0;
  }
  if (answer == record_answer::existed) {
    out << "init-store: election " << cfg.election << " already has a record on " << where
        << ": nothing changed\n";
    return 0;
  }
  err << "baton: init-store: " << (failure ? failure->message() : "no answer from " + where)
      << '\n';
  return failure ? init_store_exit_code(failure->code) : 1;
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
