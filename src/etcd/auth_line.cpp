#include "auth_line.hpp"

#include "store/check_lines.hpp"

namespace baton::etcd_detail {

check_line auth_line(const std::string& username, const std::vector<endpoint>& endpoints) {
  if (username.empty()) {
    return {check_verdict::note, "auth",
            "none: anyone who reaches the members can take the lease (etcd.username and "
            "etcd.password_file name a user when the cluster's auth is on)"};
  }
  for (const auto& ep : endpoints) {
    if (ep.scheme == "http" && !store_check_detail::is_loopback_host(ep.host)) {
      return {check_verdict::hazard, "auth",
              "as user " + username + ", whose password goes unencrypted to " + ep.redacted() +
                  " (the authenticate call carries it as it is): whoever is on the path can "
                  "read it (use https:// endpoints)"};
    }
  }
  return {check_verdict::note, "auth",
          "as user " + username + " (a refused password fails the next line)"};
}

}  // namespace baton::etcd_detail
