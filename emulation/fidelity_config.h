// A fidelity config (experiments/SCHEMA.md §10): which contexts, traces, network paths, policies,
// SLOs and workloads `kvstream fidelity` runs both ways, emulated and simulated, to measure the
// simulator's error. Parsing checks every key and names the JSON path of the first problem.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvstream::emulation {

// A trace and, optionally, the axes of its own paths: a Gbit/s trace runs other round trips, queues
// and workloads than a cellular one, on contexts whose KV is as many times larger as the rate.
struct FidelityTrace {
  std::string name, input, format = "auto";
  double scale = 1;      // or, when mean_mbps > 0, the factor that gives the trace that mean
  double mean_mbps = 0;
  std::vector<double> rtt_ms;     // empty: the config's
  std::vector<size_t> queues;     // indices into the config's; empty: all
  std::vector<size_t> workloads;  // indices into the config's; empty: all
  double kv_bytes_scale = 1;      // every level's bytes of every context, times this (text, decode times as measured)
};

// The down link's drop-tail queue: `bytes`, or `ms` of the (scaled) trace's mean rate; neither: unbounded.
struct FidelityQueue {
  std::string name;
  uint64_t bytes = 0;
  double ms = 0;
};

// What a workload leaves out to save time: with kPairs each network path runs one (policy, SLO) pair
// of the workload, the next path the next pair; with kOffsets each path runs one of its offsets, in
// turn; either shifts by one every n paths (fidelity.cpp, rotated()). Every pair (offset) is still
// run, on some paths.
enum class Rotation { kNone, kPairs, kOffsets };

// Single requests (one run per trace offset, the i-th offset for context i mod contexts) or a
// Poisson workload (one run of `requests` arrivals).
struct FidelityWorkload {
  std::string name;
  bool poisson = false;
  std::vector<double> offsets_s = {0};  // single: trace offsets; poisson: its first one
  int64_t requests = 1;
  double rate_per_s = 0;
  uint64_t seed = 1;
  Rotation rotate = Rotation::kNone;
};

struct FidelityConfig {
  std::string name, description;
  std::vector<std::string> profiles;  // context-profile files, resolved (config's folder, then data)
  std::vector<FidelityTrace> traces;
  std::vector<double> rtt_ms;
  std::vector<FidelityQueue> queues;
  std::vector<std::string> congestion_controls;
  bool slow_start_after_idle = true;
  bool offloads = true;  // the emulator's (emulate.h EmulatorOptions); false: per-packet, to cross-check it
  std::vector<std::string> policies;
  std::vector<double> slo_s;
  std::vector<FidelityWorkload> workloads;
  std::vector<std::string> link_models = {"fluid", "tcp"};  // the simulator's, each compared
  std::string hardware;  // optional hardware profile (path or shipped name) for text recompute and the query
  nlohmann::json source;  // the file as read
};

// Throws common::JsonError naming the file and JSON path of the first problem.
FidelityConfig read_fidelity_config(const std::string& path);

}  // namespace kvstream::emulation
