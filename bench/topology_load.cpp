// Loading net files: softib's reader against ibsim 0.10's parser (the anchor: time from
// start to "Network simulator ready."), on generated fat-trees up to 30,528 nodes written
// in ibnetdiscover's format. Prints one JSON line per fabric.
//   bench_topology_load [--quick]
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "fabric/generators.hpp"
#include "fabric/net_reader.hpp"
#include "fabric/net_writer.hpp"

using namespace softib;

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  std::vector<const char*> specs = {"ft2:radix=36", "ft3:radix=36"};
  if (!quick) specs.push_back("ft3:radix=48");
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("softib-bench-{}", getpid());
  std::filesystem::create_directories(dir);
  int failures = 0;
  for (const char* spec : specs) {
    auto topo = fabric::generate(spec);
    if (!topo) {
      fmt::print(stderr, "{}: {}\n", spec, topo.error().to_string());
      return 1;
    }
    const std::string path = (dir / "fabric.net").string();
    if (auto w = fabric::write_net_file(path, *topo); !w) {
      fmt::print(stderr, "{}\n", w.error().to_string());
      return 1;
    }
    const auto bytes = std::filesystem::file_size(path);
    std::vector<double> runs;
    size_t nodes = 0;
    for (int i = 0; i < 5; ++i) {
      const double t0 = bench::now_ms();
      auto loaded = fabric::read_net_file(path);
      runs.push_back(bench::now_ms() - t0);
      if (!loaded) {
        fmt::print(stderr, "{}\n", loaded.error().to_string());
        return 1;
      }
      nodes = loaded->topology.node_count();
    }
    const double softib_ms = bench::median(runs);
    // The anchor: ibsim parsing the same file, with limits raised to fit it.
    const auto ibsim_ms = bench::time_until_line(
        {"ibsim", "-n", "-s", "-N", "65536", "-S", "8192", "-P", "400000", "-L", "49152", path},
        {fmt::format("IBSIM_SOCKNAME=softib-bench-{}", getpid())}, "Network simulator ready", 120000);
    if (!ibsim_ms) ++failures;
    fmt::print("{{\"bench\":\"topology_load\",\"fabric\":\"{}\",\"nodes\":{},\"bytes\":{},\"softib_ms\":{:.1f},"
               "\"anchor\":\"ibsim 0.10 parse\",\"anchor_ms\":{},\"speedup\":{}}}\n",
               spec, nodes, bytes, softib_ms, ibsim_ms ? fmt::format("{:.1f}", *ibsim_ms) : "null",
               ibsim_ms ? fmt::format("{:.1f}", *ibsim_ms / softib_ms) : "null");
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return failures ? 2 : 0;
}
