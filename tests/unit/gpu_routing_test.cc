// Routing by GPU (builds/gpu_routing.h): what a request may ask, the service's table of
// GPU types, and how the local executor meets a need with a GPU of its host. The Slurm
// side on a real cluster: tests/e2e/test_slurm.py.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/gpu_routing.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "builds/build_request.h"
#include "support/parse_build_request.h"
#include "builds/executors/local_executor.h"
#include "support/fake_worker_launcher.h"

namespace trtwatch::builds {
namespace {

using nlohmann::json;

GpuTable Table(const std::vector<std::string>& flags, std::string_view file = "") {
  GpuTableResult r = GpuTable::Parse(flags, file);
  EXPECT_EQ(r.error, "");
  return r.table;
}

CudaDevice Device(int ordinal, std::string name, int major, int minor) {
  CudaDevice d;
  d.ordinal = ordinal;
  d.name = std::move(name);
  d.cc_major = major;
  d.cc_minor = minor;
  return d;
}

TEST(GpuRoutingTest, ARequestAsksForATypeOrACapabilityAndNothingElse) {
  const GpuNeedResult type = ParseGpuNeed(json{{"type", "H200"}});
  ASSERT_TRUE(type.need) << type.error;
  EXPECT_EQ(type.need->type, "h200");  // names are matched without regard to case
  EXPECT_EQ(GpuNeedJson(*type.need), (json{{"type", "h200"}}));
  const GpuNeedResult cc = ParseGpuNeed(json{{"compute_capability", "8.9"}});
  ASSERT_TRUE(cc.need) << cc.error;
  EXPECT_EQ(cc.need->Describe(), "compute capability 8.9");

  for (const json& bad : {json("h200"), json::object(), json{{"type", "h200"}, {"compute_capability", "9.0"}},
                          json{{"type", ""}}, json{{"type", "h 200"}}, json{{"type", std::string(33, 'a')}},
                          json{{"compute_capability", "9"}}, json{{"compute_capability", 9.0}},
                          json{{"vendor", "nvidia"}}}) {
    const GpuNeedResult r = ParseGpuNeed(bad);
    EXPECT_FALSE(r.need) << bad.dump();
    EXPECT_NE(r.error.find("{\"type\": \"h200\"}"), std::string::npos) << r.error;  // the rule, with an example
  }
}

TEST(GpuRoutingTest, TheRequestKeepsItsNeedNormalisedAndRefusesABadOne) {
  BuildRequest r;
  std::string error;
  ASSERT_TRUE(ParseInto(R"({"simulate":"small-cnn","gpu":{"type":"A100"}})", {}, &r, &error)) << error;
  EXPECT_EQ(r.gpu.type, "a100");
  EXPECT_EQ(json::parse(r.json)["gpu"], (json{{"type", "a100"}}));
  EXPECT_FALSE(ParseInto(R"({"simulate":"small-cnn","gpu":"a100"})", {}, &r, &error));
  EXPECT_NE(error.find("\"gpu\" must be an object"), std::string::npos) << error;
}

TEST(GpuRoutingTest, FlagsAndAFileMakeOneTable) {
  const GpuTable table = Table({"h200=gres:h200,cc=9.0", "L4=feature:l4"},
                               R"({"a100": {"gres": "a100", "compute_capability": "8.0"}})");
  ASSERT_EQ(table.types().size(), 3u);
  EXPECT_EQ(table.Names(), "h200 (9.0), l4, a100 (8.0)");
  EXPECT_EQ(table.types()[1].feature, "l4");
  EXPECT_EQ(SlurmGpuArguments(table.types()[0]), (std::vector<std::string>{"--gres=gpu:h200:1"}));
  EXPECT_EQ(SlurmGpuArguments(table.types()[1]), (std::vector<std::string>{"--gres=gpu:1", "--constraint=l4"}));
}

TEST(GpuRoutingTest, AWrongEntryIsRefusedNamingItAndTheRule) {
  for (const std::string flag : {"h200", "h200=h200", "h200=gres:", "h200=gres:h 200", "h200=gres:h200,cc=nine",
                                  "h200=gres:h200,mem=80G", "=gres:h200"}) {
    const GpuTableResult r = GpuTable::Parse({flag}, "");
    EXPECT_NE(r.error.find("--gpu-type \"" + flag + "\""), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("h200=gres:h200,cc=9.0"), std::string::npos) << r.error;  // an example of the form
  }
  EXPECT_NE(GpuTable::Parse({"h200=gres:h200", "H200=gres:h200"}, "").error.find("named twice"), std::string::npos);
  EXPECT_NE(GpuTable::Parse({}, "[1]").error.find("--gpu-types"), std::string::npos);
  EXPECT_NE(GpuTable::Parse({}, R"({"x": {"gres": "a", "feature": "b"}})").error.find("entry \"x\""),
            std::string::npos);
}

TEST(GpuRoutingTest, ANeedIsMetByNameOrByTheFirstTypeOfItsCapability) {
  const GpuTable table = Table({"h100=gres:h100,cc=9.0", "h200=gres:h200,cc=9.0", "l4=gres:l4"});
  EXPECT_EQ(table.Route(GpuNeed{"h200", ""}).type->gres, "h200");
  EXPECT_EQ(table.Route(GpuNeed{"", "9.0"}).type->name, "h100");
  const GpuRoute unknown = table.Route(GpuNeed{"v100", ""});
  EXPECT_FALSE(unknown.type);
  EXPECT_NE(unknown.error.find("no GPU type v100 here; this service knows h100 (9.0), h200 (9.0), l4"),
            std::string::npos)
      << unknown.error;
  EXPECT_NE(table.Route(GpuNeed{"", "7.5"}).error.find("no compute capability 7.5"), std::string::npos);
  EXPECT_NE(GpuTable().Route(GpuNeed{"h200", ""}).error.find("routes no GPU types"), std::string::npos);
}

TEST(GpuRoutingTest, TheHostsGpusMeetANeedByCapabilityOrByAWordOfTheirName) {
  const std::vector<CudaDevice> host = {Device(0, "NVIDIA L40S", 8, 9), Device(1, "NVIDIA H200", 9, 0),
                                        Device(2, "NVIDIA A100-SXM4-80GB", 8, 0)};
  const GpuTable table = Table({"hopper=gres:h200,cc=9.0"});
  EXPECT_EQ(RouteToLocalGpu(GpuNeed{"hopper", ""}, table, host).ordinal, 1);  // the table's capability
  EXPECT_EQ(RouteToLocalGpu(GpuNeed{"a100", ""}, table, host).ordinal, 2);    // a word of the name
  EXPECT_EQ(RouteToLocalGpu(GpuNeed{"", "8.9"}, table, host).ordinal, 0);
  const LocalGpuRoute l4 = RouteToLocalGpu(GpuNeed{"l4", ""}, table, host);  // "l4" is not "l40s"
  EXPECT_FALSE(l4.ordinal);
  EXPECT_NE(l4.error.find("this host has no GPU of GPU type l4; its GPUs: 0: NVIDIA L40S (8.9), 1: NVIDIA H200 (9.0)"),
            std::string::npos)
      << l4.error;
  EXPECT_NE(RouteToLocalGpu(GpuNeed{"", "9.0"}, table, {}).error.find("CUDA sees no GPU here"), std::string::npos);
}

std::string EnvValue(const std::optional<std::vector<std::string>>& env, const std::string& name) {
  if (!env) return "(the service's)";
  for (const std::string& e : *env) {
    if (e.starts_with(name + "=")) return e.substr(name.size() + 1);
  }
  return "(unset)";
}

TEST(GpuRoutingTest, TheLocalExecutorBuildsOnTheDeviceThatMeetsTheNeedAndWaitsWhileItIsBusy) {
  boost::asio::io_context io;
  auto launcher = std::make_unique<testing::FakeWorkerLauncher>(io);
  testing::FakeWorkerLauncher* fake = launcher.get();
  std::vector<SlotGpu> host = {{Device(0, "Fake GPU H", 9, 0), "GPU-h"}, {Device(1, "Fake GPU A", 8, 0), ""}};
  host[0].device.pci_bus_id = "0000:5e:00.0";
  host[1].device.pci_bus_id = "0000:3b:00.0";
  LocalExecutor executor(io, std::move(launcher), "/bin/trtwatch", {}, [&] { return HostGpuList{host, ""}; });
  EXPECT_EQ(executor.capacity(), 2);
  EXPECT_TRUE(executor.CheckGpu(GpuNeed{"", "9.0"}).accepted());
  EXPECT_NE(executor.CheckGpu(GpuNeed{"", "8.6"}).error.find("this host has no GPU of compute capability 8.6"),
            std::string::npos);

  // Only its GPU visible, by UUID: a real build builds on the one device it sees.
  WorkerTask real{"b_1", std::nullopt, 10, GpuNeed{"", "9.0"}, true};
  ExecutionStart first = executor.Start(real, {"build", "m.onnx"});
  ASSERT_TRUE(first.execution);
  EXPECT_EQ(fake->worker(0)->spec.argv, (std::vector<std::string>{"trtwatch", "build", "m.onnx", "--device", "0"}));
  EXPECT_EQ(EnvValue(fake->worker(0)->spec.env, "CUDA_VISIBLE_DEVICES"), "GPU-h");
  EXPECT_EQ(first.execution->place().job.gpu_pci_bus_id, "0000:5e:00.0");
  EXPECT_EQ(first.execution->place().job.cuda_visible_devices, "GPU-h");

  // The one 9.0 GPU is busy: the next 9.0 build waits, then starts on it (a simulated
  // build is given the GPU but no --device).
  WorkerTask simulated{"b_2", std::nullopt, 10, GpuNeed{"", "9.0"}, false};
  ExecutionStart second = executor.Start(simulated, {"build", "--simulate", "x"});
  ASSERT_TRUE(second.execution);
  EXPECT_EQ(fake->started(), 1u);
  EXPECT_EQ(second.execution->place().job.state, "PENDING");
  EXPECT_EQ(second.execution->place().job.pending_reason, "waiting for a free GPU of compute capability 9.0");
  int moved = 0;
  second.execution->WatchPlace([&] { ++moved; });
  io.run();
  ASSERT_TRUE(first.execution->Poll());  // its end frees the GPU
  io.restart();
  io.run();
  ASSERT_EQ(fake->started(), 2u);
  EXPECT_EQ(moved, 1);
  EXPECT_EQ(fake->worker(1)->spec.argv, (std::vector<std::string>{"trtwatch", "build", "--simulate", "x"}));
  EXPECT_EQ(EnvValue(fake->worker(1)->spec.env, "CUDA_VISIBLE_DEVICES"), "GPU-h");
  EXPECT_NE(EnvValue(fake->worker(1)->spec.env, "TRTWATCH_SIMULATED_GPU").find(" sm 9.0"), std::string::npos)
      << "a simulated build simulates its GPU's timing cache";
  EXPECT_EQ(second.execution->place().job.state, "RUNNING");

  // A GPU without NVML's UUID is named by CUDA's number.
  WorkerTask older{"b_3", std::nullopt, 10, GpuNeed{"", "8.0"}, true};
  ASSERT_TRUE(executor.Start(older, {"build", "m.onnx"}).execution);
  EXPECT_EQ(fake->worker(2)->spec.argv, (std::vector<std::string>{"trtwatch", "build", "m.onnx", "--device", "1"}));
  EXPECT_EQ(EnvValue(fake->worker(2)->spec.env, "CUDA_VISIBLE_DEVICES"), "(the service's)");

  WorkerTask elsewhere{"b_4", std::nullopt, 10, GpuNeed{"", "8.6"}, true};  // queued by another replica
  const ExecutionStart refused = executor.Start(elsewhere, {"build", "m.onnx"});
  EXPECT_FALSE(refused.execution);
  EXPECT_NE(refused.error.find("compute capability 8.6"), std::string::npos);

  // The H is gone from the driver's list: out of service, and a 9.0 build is refused.
  host.erase(host.begin());
  const ExecutionStart lost = executor.Start(WorkerTask{"b_5", std::nullopt, 10, GpuNeed{"", "9.0"}, true}, {"build"});
  EXPECT_FALSE(lost.execution);
  EXPECT_NE(lost.error.find("this host has no GPU of compute capability 9.0"), std::string::npos);
  EXPECT_EQ(executor.capacity(), 1);
}

}  // namespace
}  // namespace trtwatch::builds
