// Tests that name enum options by text (parameterized over policy or
// scheduler names, or checking that a bad name is refused).
#ifndef LSM_OPTIONS_OPTION_TEST_UTIL_H_
#define LSM_OPTIONS_OPTION_TEST_UTIL_H_

#include <string_view>

#include "lsm/options.h"

namespace lsm::test {

// The value of E named `name`; for an unknown name a value outside the enum,
// which CheckOptions (and so DB::Open and the factories) refuses.
template <typename E>
E Named(std::string_view name) {
  E value = static_cast<E>(EnumNames<E>::kNames.size());
  ParseName(name, &value);
  return value;
}

}  // namespace lsm::test

#endif  // LSM_OPTIONS_OPTION_TEST_UTIL_H_
