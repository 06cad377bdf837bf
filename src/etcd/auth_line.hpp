// check-store's "auth" line for etcd: how baton authenticates to the
// cluster, weighed by the rule every kind's check follows. No
// authentication is a note (the cluster's own choice); a password sent in
// plain text beyond this host is a hazard: etcd's simple auth carries it
// as it is in the authenticate call's body.
#pragma once

#include <string>
#include <vector>

#include "baton/check_report.hpp"
#include "endpoint.hpp"

namespace baton::etcd_detail {

/// `username` as etcd.username gives it ("" = none), over `endpoints`.
check_line auth_line(const std::string& username, const std::vector<endpoint>& endpoints);

}  // namespace baton::etcd_detail
