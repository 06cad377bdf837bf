// The postgres kind's checks (see postgres_check.cpp).
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>

#include "baton/config.hpp"
#include "baton/check_report.hpp"

namespace baton::store_check_detail {

/// Connects as the postgres store does and reports reachability, version,
/// role, user, the lease table's privileges, the candidates' table (a note
/// when it is missing or unusable: leases work without it), latency and the
/// clock.
void async_check_postgres(boost::asio::io_context& io, const config& cfg,
                          std::function<void(check_report)> done);

}  // namespace baton::store_check_detail
