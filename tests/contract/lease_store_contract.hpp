// The lease-store contract: one GoogleTest suite, written once, that every
// store kind must pass (lease_store_contract.cpp has the cases). A kind joins
// by instantiating it with its harness:
//
//   INSTANTIATE_TEST_SUITE_P(contract, lease_store_contract,
//                            ::testing::Values(contract_kind{"memory", make}),
//                            contract_kind_name);
//
// so that every test's full name says which kind it ran against
// (contract/lease_store_contract.acquire_when_free/memory) and
// `ctest -R contract` selects them all.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "contract_harness.hpp"

namespace baton::contract {

class lease_store_contract : public ::testing::TestWithParam<contract_kind> {
 protected:
  void SetUp() override;
  void TearDown() override;

  contract_harness& harness() { return *harness_; }

 private:
  std::unique_ptr<contract_harness> harness_;
};

/// The cases of lease.failsafe peers (failsafe_contract.cpp), which only
/// the kinds that carry the mode out instantiate, as lease_store_contract.
class failsafe_contract : public lease_store_contract {};

/// The parameter's name: the kind ("memory", "redis").
std::string contract_kind_name(const ::testing::TestParamInfo<contract_kind>& info);

}  // namespace baton::contract
