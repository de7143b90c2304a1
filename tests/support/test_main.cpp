// doctest main for every vkcnn test binary: validation is forced on, and the process fails if any
// validation message was seen, even one that arrived outside a test case.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "test_support.h"

int main(int argc, char** argv) {
  setenv("VKCNN_VALIDATION", "1", 1);
  doctest::Context runner(argc, argv);
  int result = runner.run();
  if (runner.shouldExit()) return result;
  vkcnn::test::releaseContext();
  const uint64_t messages = vkcnn::test::validationMessages();
  if (messages) {
    std::fprintf(stderr, "FAILED: %llu validation message(s) were reported\n",
                 (unsigned long long)messages);
    return 1;
  }
  return result;
}
