// lsm-sim: see cli.h and README.md.
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  lsm::sim::CliOptions options;
  bool help = false;
  lsm::Status s = lsm::sim::ParseArgs(args, &options, &help);
  if (help) {
    std::cout << lsm::sim::Usage();
    return 0;
  }
  if (!s.ok()) {
    std::cerr << "lsm-sim: " << s.ToString() << "\n" << "(see lsm-sim --help)\n";
    return 2;
  }
  return lsm::sim::RunSimulation(options, std::cout, std::cerr);
}
